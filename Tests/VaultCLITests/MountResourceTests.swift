import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What an open file holds in the mount (its reader, descriptor, buffers,
/// the chunk being opened ahead) goes on FUSE release, also for a reader
/// killed mid-read: many files read one by one, many readers at once, and
/// the mount's threads, descriptors and memory stay flat. Every read runs
/// under a deadline, after which vault is killed (the reads blocked in the
/// kernel then fail), so a hang fails the test instead of hanging the suite.
extension MountTests {
    @Test func thousandFolderFilesThenALargeFile() throws {
        let pool = randomBytes((1 << 20) + 100_000)
        let files = (0..<1000).map { i in
            let (offset, size) = (i * 4099 % (1 << 20), 40_000 + i * 7919 % 60_000)
            return (name: "f\(i)", content: Array(pool[offset..<(offset + size)]))
        }
        try addFolder("many", files)
        let big = randomBytes(24 << 20)
        try add("big.bin", big, ["--no-compress"])

        let (p, m) = try mount()
        defer { p.killGroup() }
        let before = MountProcess(pid: p.pid)
        let wrong = readUnderDeadline(60, "1,000 folder files", p) {
            // 4 KiB reads, as stdio does: each file is several FUSE reads, so
            // the next chunk is being opened ahead as the file is released.
            files.filter { readWhole(m + "/many/" + $0.name, buffer: 4096) != ($0.content, 0) }.map(\.name)
        }
        #expect(wrong == [], "files read wrong: \(wrong ?? [])")
        let after = MountProcess(pid: p.pid).settled(toward: before)
        #expect(after.threads < 32, "threads \(before.threads) before, \(after.threads) after 1,000 files")
        #expect(after.descriptors <= before.descriptors + 8, "descriptors \(before.descriptors) before, \(after.descriptors) after")
        #expect(after.residentKiB < 128 << 10, "resident \(after.residentKiB) KiB after 1,000 files")

        let whole = readUnderDeadline(30, "the large file after 1,000 folder files", p) {
            readWhole(m + "/big.bin", buffer: 1 << 20)
        }
        #expect(whole.map { $0 == (big, 0) } == true, "big.bin: errno \(whole?.errno ?? -1), \(whole?.bytes.count ?? -1) bytes")
        unmountsOnSIGTERM(p, m)
    }

    @Test func manyReadersAtOnceAndKilledReaders() throws {
        let pool = randomBytes(1 << 20)
        let files = (0..<64).map { i in
            let (offset, size) = (i * 9973 % 600_000, 300_000 + i * 1000)
            return (name: "f\(i)", content: Array(pool[offset..<(offset + size)]))
        }
        try addFolder("many", files)
        let big = randomBytes(24 << 20)
        try add("big.bin", big, ["--no-compress"])
        let other = randomBytes(16 << 20)
        try add("other.bin", other, ["--no-compress"])

        let (p, m) = try mount()
        defer { p.killGroup() }
        let before = MountProcess(pid: p.pid)

        // Readers killed mid-read (or just after, on a fast day): dd with
        // 4 KiB reads, SIGKILLed after a few milliseconds. Nothing is
        // asserted about how far each got, only that what it held goes.
        let killed = readUnderDeadline(60, "readers killed mid-read", p) {
            (0..<12).map { k in
                let file = k % 2 == 0 ? "/other.bin" : "/many/f\(k)"
                return (try? CLIHarness.run(["-s", "KILL", "0.0\(k % 5 + 1)", "dd", "if=" + m + file, "of=/dev/null", "bs=4k", "status=none"],
                                            environment: self.v.environment(), timeout: 30, executable: "/usr/bin/timeout"))?.status ?? -1
            }
        }
        #expect(killed?.allSatisfy { $0 == 0 || $0 == 137 } == true, "dd statuses \(killed ?? [])")

        // Eight readers of different files at once, and one of the large file.
        let wrong = readUnderDeadline(60, "nine readers at once", p) {
            let found = Locked<[String]>([])
            let group = DispatchGroup()
            for t in 0..<9 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    if t == 8 {
                        if readWhole(m + "/big.bin", buffer: 1 << 20) != (big, 0) { found.update { $0.append("big.bin") } }
                        return
                    }
                    for f in files.enumerated().filter({ $0.offset % 8 == t }).map(\.element)
                    where readWhole(m + "/many/" + f.name, buffer: 1 << 17) != (f.content, 0) {
                        found.update { $0.append(f.name) }
                    }
                }.start()
            }
            group.wait()
            return found.value
        }
        #expect(wrong == [], "read wrong: \(wrong ?? [])")
        #expect(readWhole(m + "/other.bin", buffer: 1 << 16) == (other, 0))

        let after = MountProcess(pid: p.pid).settled(toward: before)
        #expect(after.threads < 32, "threads \(before.threads) before, \(after.threads) after")
        #expect(after.descriptors <= before.descriptors + 8, "descriptors \(before.descriptors) before, \(after.descriptors) after")
        unmountsOnSIGTERM(p, m)
    }

    /// Replies are written from the decrypted chunks themselves, after the
    /// file's lock is let go: eight readers of one file at once, each over
    /// stretches of its 12 chunks (the item keeps four), each stretch's pages
    /// dropped before it is read, make chunks leave the cache while other
    /// replies are still written from them. Every byte must be the file's.
    @Test func eightReadersOfOneFileGetItsBytesWhileItsChunksComeAndGo() throws {
        let big = randomBytes(12 * Self.chunk + 4_321)
        try add("big.bin", big, ["--no-compress"])
        let (p, m) = try mount()
        defer { p.killGroup() }
        let path = m + "/big.bin", chunk = Self.chunk
        for round in 0..<4 {
            let wrong = readUnderDeadline(60, "eight readers, round \(round)", p) { () -> [String] in
                let found = Mutex<[String]>([])
                DispatchQueue.concurrentPerform(iterations: 8) { reader in
                    var random = SplitMix(state: UInt64(round * 8 + reader))
                    for k in 0..<32 {
                        // Stretches of up to 1.5 chunks: some cross a chunk boundary.
                        let count = 1 + Int(random.next() % UInt64(chunk + chunk / 2))
                        let offset = Int(random.next() % UInt64(big.count - count))
                        // Its pages dropped first, so the read reaches the mount.
                        let fd = open(path, O_RDONLY)
                        if fd >= 0 { _ = posix_fadvise(fd, off_t(offset), off_t(count), Int32(POSIX_FADV_DONTNEED)); close(fd) }
                        let got = MountTests.pread(path, offset, count)
                        if got.errno != 0 || got.bytes != Array(big[offset..<(offset + count)]) {
                            found.withLock { $0.append("reader \(reader) read \(k): \(count) at \(offset), errno \(got.errno)") }
                        }
                    }
                }
                return found.withLock { $0 }
            }
            #expect(wrong == [], "round \(round): \(wrong ?? [])")
        }
        unmountsOnSIGTERM(p, m)
    }

    // MARK: helpers

    /// After all that, SIGTERM still unmounts and ends vault (the loop's
    /// threads all come back); the deferred group kill is only a fallback.
    func unmountsOnSIGTERM(_ p: Background, _ m: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard p.poll() == nil else { return }   // killed at a deadline already
        kill(p.pid, SIGTERM)
        #expect(p.wait(timeout: 20) == 0, "\(p.stderr)", sourceLocation: sourceLocation)
        #expect(!isMounted(m), sourceLocation: sourceLocation)
    }

    /// Adds a folder item of `files` (stored raw, as the defect was found).
    func addFolder(_ name: String, _ files: [(name: String, content: [UInt8])]) throws {
        let dir = v.path + "/" + name
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        for f in files { try v.write(name + "/" + f.name, f.content) }
        let r = try v.add(["add", "--no-compress", dir])
        #expect(r.status == 0, "add: \(r.stderr)")
        try FileManager.default.removeItem(atPath: dir)
    }

    /// Runs `body` on its own thread; past `seconds`, records the hang and
    /// SIGKILLs vault alone (fusermount3's helper then unmounts, and reads
    /// blocked in the kernel fail), waits for the thread and returns nil.
    func readUnderDeadline<T>(_ seconds: Double, _ what: String, _ mount: Background,
                              sourceLocation: SourceLocation = #_sourceLocation, _ body: @escaping () -> T) -> T? {
        let box = Unchecked<T?>(nil)
        let work = Unchecked(body)
        let done = DispatchSemaphore(value: 0)
        Thread {
            box.value = work.value()
            done.signal()
        }.start()
        if done.wait(timeout: .now() + seconds) == .success { return box.value }
        Issue.record("\(what): no answer after \(Int(seconds)) s (mount threads: \(MountProcess(pid: mount.pid).threads)); vault killed",
                     sourceLocation: sourceLocation)
        kill(mount.pid, SIGKILL)
        _ = done.wait(timeout: .now() + 30)
        return nil
    }
}

/// A whole file through read(2) with a buffer of `buffer` bytes; the errno on failure.
func readWhole(_ path: String, buffer size: Int) -> (bytes: [UInt8], errno: Int32) {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return ([], errno) }
    defer { close(fd) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: size)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if n < 0 { return (out, errno) }
        if n == 0 { return (out, 0) }
        out += buffer[..<n]
    }
}

/// The mount process as /proc shows it: threads, open descriptors, resident memory.
struct MountProcess {
    let pid: pid_t
    let threads: Int, descriptors: Int, residentKiB: Int

    init(pid: pid_t) {
        self.pid = pid
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") } ?? .max
        }
        threads = field("Threads")
        residentKiB = field("VmRSS")
        descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? .max
    }

    /// Releases reach the mount after close(2) returns: looks again for a
    /// few seconds while it holds more than the tests allow (`before`'s
    /// descriptors + 8: libdispatch's own, and the mount's few recently
    /// opened items; 32 threads).
    func settled(toward before: MountProcess) -> MountProcess {
        var now = self
        let deadline = Date().addingTimeInterval(10)
        while now.descriptors > before.descriptors + 8 || now.threads >= 32, Date() < deadline {
            usleep(50_000)
            now = MountProcess(pid: pid)
        }
        return now
    }
}

/// A value handed between threads that a semaphore or group orders.
private final class Unchecked<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

/// A value several threads update.
private final class Locked<T>: @unchecked Sendable {
    private var stored: T
    private let lock = NSLock()
    init(_ value: T) { stored = value }
    func update(_ change: (inout T) -> Void) { lock.lock(); defer { lock.unlock() }; change(&stored) }
    var value: T { lock.lock(); defer { lock.unlock() }; return stored }
}
