// The word list of short move codes (docs/FORMAT.md, "Device move: short
// code"): 2048 common English words, so each word carries 11 bits.
//
// Written for vault from scratch (no list was copied), and placed in the
// public domain (CC0). Every word is 3 to 8 lower-case ASCII letters, and no
// two words are one typo apart (one letter changed, added, dropped, or two
// neighbours swapped), so a single typo gives a word that is not on the
// list: the sender says so before it connects, instead of spending the
// code's one attempt on it. MoveWordsTests checks both properties.
//
// No index of a word ever leaves this process (the code's text itself is the
// CPace password), so the order of the list is not part of the format; the
// set is: a sender refuses a word that its own list does not hold.

enum MoveWords {
    static let all: [String] = """
        abacus able absorb abstract acacia academy accent account achieve acid acorn acquire acrobat
        active actor adapt adjust admiral admire adult advance adverb advise affair afford agenda agent
        agile agree airline airport airship airy alarm album alchemy alcove alert alias alibi alive
        alley allow almanac almond alpha alphabet amber ample amulet amuse anagram anchor ancient angle
        angry answer ant anthem antique anvil apostle appear appetite applaud apricot april apron
        aquarium arcade arch archive arctic arena arm armada armchair aroma arrange arrive arrow artist
        artwork ask aspect asphalt assemble assist asteroid athlete atlas atom attach attend attic
        august aura aurora author autumn avenue avocado avoid awake axe axis back backpack bacon
        bacteria badge bag bagel bake bakery balance balcony bald ballet balloon balmy bamboo banana
        bandage bandit banjo banker banquet barbecue barber bargain baritone barley barn barracks
        barrel basic basket bath bathtub battery battle bazaar beach beam beard beaver bed beef beehive
        beetle begin behave believe bell belong benefit berry bias bicycle bind binder biology birch
        birthday biscuit bishop bison bistro bite blade blanket blast blender blink bliss blizzard
        block blood blossom bluff blush boar bobcat body boil bolt bone bonfire bonnet bonus book
        bookcase borrow boss boulder bounce bouquet boutique bow bowling boxer bracelet brand brave
        bread breath breeze brewery brick bride brief brigade bright bring broccoli brochure broom
        brownie bubble bucket buckle budget buffalo buffer build builder bulb bump bumper bundle
        bungalow burden burrito burst bury butcher butler button buzz buzzard cabaret cabbage cabin
        cactus cadet cafe calculus calendar calico call camel camera campfire campus canal canary
        candid candle candy canister canoe canopy canvas canyon cap capsule captain caramel carbon
        cardigan careful cargo carnival carousel carpet carrot carry cart cartoon carve cascade cash
        cashew cashier cashmere casino castle casual catalog catch cause cavalry cavern cedar celery
        cellar census ceramic cereal chair chalk chamber chance channel chapel chapter charge chariot
        charlie charm chase cheap checkers cheek cheerful cheese cheetah chef chemist cherry chest
        chestnut chicken chili chilly chimney chin chipmunk chisel chive chorus chowder chubby cider
        cinema cinnamon circle circus citadel citizen civil claim clan clarinet classic clerk clever
        client cliff climate climb cling clinic clip close cloudy clown clumsy cluster coach coastal
        coat cobra cockpit cocoa coconut cod coffee cogwheel collage collect colony column comb comedy
        comet comfort comma command compare compass compete complain concert concrete condor confess
        confetti confirm connect consider consult contain contest continue contour cookbook cookie cope
        copper coral corduroy cork corner correct corridor corsage cosmic cosmos costume cottage cotton
        cougar cough council count countess courage cowbell cowboy coyote cozy crab crack cracker
        crafty crane crater crawl crayfish crayon cream create credit crepe crescent cricket crisp
        crooked cross crow crumpet crush cry crystal cube cuckoo cucumber cuddly cuisine cupboard
        cupcake curator curl current curtain curved cushion custard custom cutlery cycle cypress
        daffodil daisy dale damp dance daring dark dawn daylight dazzling deadline deal dealer debate
        debris debut decade december decent decibel declare decorate deep defend degree delay delight
        deliver delta demand denim dense dentist depot deputy describe desert deserve design desire
        desk destroy detect detour develop diagram dialect diamond diary diesel dig digit dine dingo
        dinner dinosaur diploma direct director disc discover diver divide dizzy dock doctor doctrine
        dodge doll dolphin domain dome domino donate donkey donut door doorbell doorway double doubt
        doughnut drag dragon drama drawer dreamy dress drift drink drip drive drizzle drum drummer duet
        dumpling dungeon duty dwarf dynamo dynasty eager eagle early earmuff earring earth easel easy
        eat echo eclipse ecology edit editor educate eel egg eggplant eggshell elastic elbow elect
        electron elegant element elephant elevator elite elk embassy embrace emerald emerge emperor
        empire employ empty emu enable encore end endless endure energy engine enigma enjoy enter
        envelope enzyme epic episode equal equator era eraser error escape espresso essay estuary ether
        even evening exact exam examine excite excuse exercise exhibit exist exotic expand expect
        explain explode express extend fabric factory fade fail faint fairway falcon falconer family
        famous fan fancy fanfare fantasy farmer farmland fashion fast fasten faucet fault fear fearless
        feather february feed fence fennel fern ferret festival fetch fiber fiction fiddle field fierce
        figure fill filter finch finger finish fire fireball fireman firework fiscal fishbowl fisher
        fit fjord flag flagpole flame flamingo flannel flash flavor flee fleece float florist flotilla
        flour flow fluffy flute fly focus fog foggy fold folder folklore follow football footnote
        footpath forecast forest forge forgive forklift form format formula fortress fossil found
        fountain foxtrot fragment frank freckle freedom freeway fresh friday friend friendly frontier
        frost frozen fruit fudge fuel fullback funny furnace future fuzzy gadget galaxy gallery gallon
        game garage garden gardener gargoyle garland garlic garnet garrison gather gauge gazebo gazelle
        gecko gem gemstone general genius genre gentle geometry geranium gerbil geyser ghost giant gift
        gingham giraffe give glacier glad glance glass gleaming glider glimpse globe glory glossy glue
        goal goblet goblin golden goldfish golf gondola gong goose gopher gorilla gospel gossip gourmet
        governor graceful grammar granary granite granola grape graphite grasp gravel gravity gravy
        great green gremlin grid griffin grizzly groan grocery group grouse grove growth grumpy guard
        guardian guava guess guide guitar gull gumdrop gymnast habit hairpin halibut hallway halo ham
        hammer hammock hamster handbag hang hangar happen happy harbor hardware hardy hare harmony
        harvest hasty hatchet hawk hazard hazelnut headband healthy heart heavy hedgehog height heir
        heirloom helium helix helmet help hemlock herb heritage hermit heron herring hexagon hidden
        hide high highway hinge hippo history hobby holiday hologram homeland homely honest honey
        honeybee honor hop horizon horn hornet hose hospital hotdog hotel hover hug humble hummus humor
        hunger hungry hunt hurry husky hydrant hyena hymn ibis iceberg icicle icon icy idea identify
        idle igloo ignore iguana image imagine impact impress improve incense include increase index
        india infant infinity inform inject ink inkwell input insignia inspire install instinct intend
        interval invent inventor invite island isotope itch item ivory jackal jacket jaguar janitor
        january jar jargon jasmine javelin jelly jester jetliner jewel jigsaw jockey join joke journal
        journey joy joyful juggle juice jukebox juliet july junction june juniper justice kangaroo
        kayak kebab keen kernel ketchup kettle key keyboard keyhole kick kilo kimono kindling king
        kingdom kiosk kitchen kitten kiwi knapsack knee knife knight knit knob knock knuckle koala lab
        label lacrosse ladder ladybug lagoon land landmark lantern laptop large larkspur lasagna late
        lattice laugh laundry laurel lava lavender lawyer lazy lead learn leave legal legend lemon
        lemonade lemur lens lentil leopard lesson letter lettuce level levitate liberty library license
        lichen lifeboat light lily lima limerick limit linguist lion lipstick liquid list listen little
        lively lizard llama lobster local locket locust lofty logbook logic lonely longbow lotus loud
        love lower lucky lullaby lumber lunar lunch lynx lyric macaroni macaw machine mackerel magazine
        magic magician magnet magnolia magpie mahogany maid mailbox mailman major mammal mammoth manage
        manatee mandolin mango mangrove mantle marathon marble margin marigold marimba marine market
        marmot marsh martini marzipan mascara mascot mason matrix matter mattress may maze meadow
        measure meatball mechanic medal meerkat meet mellow melon memo memory menthol merchant mercy
        meridian mesa message meteor method metro mica microbe midfield midnight mighty mike mild miner
        minnow minstrel mint minute miracle mirror mission misty mix moan moccasin model modern modest
        moist mole molecule moment monarch monday monitor monk monocle monsoon monster mood moonbeam
        morning mosaic mosquito mossy moth motion motor motto mouse muddy mudslide muffin mulberry
        mural murmur muscle museum mushroom musician mussel mustang mystery nanny napkin narwhal nation
        native nature nautilus nebula necklace necktie nectar needle nephew nervous net network neutron
        nice nickel nightcap nimble nitrogen noble noise nomad noodle noon normal note notebook notice
        novel november nurse nutmeg nutshell nylon oak oasis obelisk obey object observe obtain ocean
        octagon october octopus odd odyssey offer office offshore omelet omen omnibus onion onyx opal
        opera operator opossum optimist option oracle orange orbit orca orchard orchid order oregano
        organism organize origin oriole ornament oscar osprey ostrich otter outfit outpost overcoat owe
        oxygen oyster pact paddle page painter pajamas palace palette palm pancake pancreas panda panel
        panic panther pantry papa papaya parade paradox parakeet parasol parcel pardon parent parlor
        parsley parsnip party pass passport pasta pasture patrol pattern pavilion payment peace peacock
        peak peanut peapod pearl pebble pecan pelican pencil pendant pendulum penguin penknife penny
        pentagon people pepper perfect perform period person petal petunia pharaoh pharmacy pheasant
        phoenix phrase piano pickaxe pickle picnic pie piece pigeon pillar pillow pilot pinecone
        pinwheel pipeline pirate pixel pizza plain plankton plant plasma platinum play plaza please
        plug plumage plump poem poetry point polish polite polka pollen polygon pond popcorn poppy
        popsicle porridge portion portrait postcard pot potato potluck pour powder practice prairie
        preach prefer prepare present preserve pretend pretzel priest prince princess prism prize
        problem produce profile profit program project promise proof propane prophet prose prospect
        protein proton proud provide pub pudding pulley pulse puma pumpkin pupil puppet pure push
        puzzle pyramid python quack quadrant quail quarry quarter quartz quebec queen quest question
        queue quiche quiet quintet quota rabbit raccoon race radar radiate radiator radio radish raft
        railroad rain rainbow raincoat rainfall raise raisin rally ranch random ranger rapid raven
        ravine ravioli raw ready realize reason rebel receive recipe recital record reduce referee
        reflect refuse region regret reign reindeer reject rejoice relax release relic rely remain
        remedy remember remind remove rental repair repeat replica report reptile request rescue result
        retire return reveal rhubarb rhyme rhythm ribbon rich rickshaw ridge rigid rinse ripe risk
        risotto ritual rival robin robust rodeo rooftop root rosemary rosy rotunda royal ruby rudder
        rugged rule rusty sacred saffron saga sailboat sailor salad salon salsa salt salute sandbox
        sandwich sapling sapphire sardine satchel satire satisfy saturday sauce sausage savanna save
        scaffold scale scarf scarlet scatter scene scheme scholar school schooner science scissors
        scold scooter score scorpion scout scrape scratch screen screw script scrub sculptor sea
        seahorse search seashell seaweed secret sector segment seminar senator sentence sentinel sequel
        sequin sequoia series serve session shack shadow shaggy shake shallow shamrock sharp sheep
        shelf shelter sheriff shield shiny shipyard shiver shoelace shovel shrimp shrine shrug shy
        sidewalk sierra sign signal silence silent silky silver simple sip skate skeleton sketch ski
        skunk skyline slap sled sleek sleepy slide slim slogan sloth small smart smash smile smoke
        smooth snail snatch sneeze sniff snow snowball society sofa softball solar soldier solid solo
        solve soothe soprano sort soup source souvenir space spaniel spark sparkle sparrow spectrum
        speech spell spend sphere spicy spider spin spinach spirit splash spoil spoon spotty spray
        spring sprout spruce spyglass squad square squash squeak squeeze squirrel stable stadium stage
        stain stamp stand stanza stapler star starfish starling station statue steady steak steer step
        steppe sticky still stitch stone stool stork stormy strategy stream stretch strip stroll strong
        student studio stuff sturdy style subtract subway succeed sugar suggest suit suitcase summer
        summit sun sunday sunlight sunrise sunset sunshine super supply support suppose surgeon
        surprise surround sushi suspect swan swear sweater sweet swift swing sycamore syllable symbol
        symphony symptom syntax syrup system tablet tackle taco tadpole talent talk tapestry target
        tariff taste teacher teacup teapot tease temper tempest temple tempo tenant tender tension tent
        terminal termite terrier thank thaw theater theme theory thermos thick thimble thistle thread
        throne throw thunder thursday ticket tidy tiger timber title toad toast toaster toboggan tofu
        token tomato toolbox topaz topic topsoil torch tornado tortoise total toucan towel township
        tractor trade tragedy trail tranquil transit trap traveler treasure treaty tree treetop tremble
        trend triangle tribe tribute trio triumph trombone trophy tropical trot trouble truffle trust
        truth tuba tuesday tugboat tulip tundra tunnel turbine turkey turn turnip turtle tutor tuxedo
        twig twilight twist type typhoon ukulele umbrella undertow unfold unicorn uniform unite
        universe unlock unpack update urban use usual utility vacuum vagabond vague valid vanilla
        vanish vapor vase velvet veranda verdict version vertebra vessel vest victor video view vigor
        viking villa village vineyard vinyl violet violin viper virtue vision visit vivid voice volcano
        volume vortex voyage vulture waffle wagon wait walkway walleye walnut walrus wander warbler
        wardrobe warrior wasp water wavy wealth weary wedding weekday weekend weigh welcome welfare
        whale wheat wheel whip whirl whiskey whisper white wildcat windmill window windpipe windy
        wingspan winter wisdom wise wishbone witty wobble wombat wooden woodland woods word workshop
        worry worth wreck wren wrench wrestle wriggle writer xray yacht yard yogurt young youth zany
        zebra zenith zeppelin zesty zipper zoo zucchini
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)

    /// Each word's position in `all`.
    static let index: [String: Int] = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1, $0) })
}
