import VaultRemote

extension JSONOutput {
    /// One remote of `remote list --json`.
    struct Remote: Encodable {
        let name: String
        let target: String
        let generation: UInt64
        init(_ r: RemoteConfig.Remote) { (name, target, generation) = (r.name, r.target, r.known) }
    }

    /// `push --json`, `pull --json`, `clone --json`.
    struct Transfer: Encodable {
        let remote: String
        let generation: UInt64
        let files: Int
        let bytes: UInt64
        let deleted: Int
        let dropIns: Int
        let seconds: Double
        let state: String
        enum CodingKeys: String, CodingKey {
            case remote, generation, files, bytes, deleted, dropIns = "drop_ins", seconds, state
        }
    }
}
