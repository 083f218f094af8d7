import Foundation

/// One blob read whole in one request from its start, cut into its blocks
/// as the answer arrives, for a command that reads every block (a whole
/// restore, `check --read-data`). Through `rclone serve http`, each
/// request of a window made rclone open the S3 object twice (once to sniff
/// a content type, once at the offset) and drop both unfinished: the S3
/// server spent 3x the CPU of one whole read (SeaweedFS, 10 packs of 33
/// MB: 105 ticks in windows of 12 MiB, 34 whole).
///
/// The stream runs ahead of the blob's readers by at most `limit` blocks,
/// then waits (memory stays bounded whatever the blob's size). A reader
/// takes its block, waiting for it while it is still to come; a block the
/// stream has passed, or any block once the stream failed or its object's
/// size is not the one expected, is not the stream's to give: the reader
/// fetches it on its own, which checks and reports what went wrong. So the
/// stream only ever saves requests, and never decides what is read. What
/// it hands out is bytes: ItemReader authenticates every chunk.
final class BlobStream: @unchecked Sendable {
    // @unchecked Sendable: every field below is used only under `condition`.
    private let condition = NSCondition()
    /// Blocks received and not yet taken (block index → bytes).
    private var ahead: [UInt64: ArraySlice<UInt8>] = [:]
    /// The index of the next block to arrive.
    private var next: UInt64 = 0
    /// The object's size, from the answer's Content-Range.
    private var total: UInt64?
    private var ended = false
    private var cancelled = false
    let limit: Int

    /// Starts reading `path` of `http` on a thread of its own.
    init(_ http: HTTPRange, _ path: String, limit: Int) {
        self.limit = max(1, limit)
        Thread { [self] in run(http, path) }.start()
    }

    /// The blob's reader is gone: the transfer stops at its next bytes.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Block `index` of a blob of `size` bytes, once it arrives; nil if
    /// this stream will not bring it.
    func take(_ index: UInt64, size: UInt64) -> ArraySlice<UInt8>? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let total, total != size { return nil }
            if let block = ahead.removeValue(forKey: index) {
                condition.broadcast()
                return block
            }
            if ended || index < next { return nil }
            // The stream waits for room that only readers make: blocks
            // nobody took yet (a reader jumped past them) go, lowest first.
            if ahead.count >= limit, let lowest = ahead.keys.min() {
                ahead[lowest] = nil
                condition.broadcast()
                continue
            }
            condition.wait()
        }
    }

    private func run(_ http: HTTPRange, _ path: String) {
        var block: [UInt8] = [], index: UInt64 = 0, size: UInt64 = 0
        // A failed stream only means its readers fetch on their own, which
        // meets the same failure and reports it there.
        _ = try? http.stream(path, from: 0, begin: { [self] total in
            condition.lock()
            defer { condition.unlock() }
            self.total = total
            size = total
            block.reserveCapacity(Int(Blocks.range(0, size: total).count))
            return !cancelled
        }, take: { [self] bytes in
            var rest = bytes[...]
            while !rest.isEmpty {
                let length = Int(Blocks.range(index, size: size).count)
                let n = min(length - block.count, rest.count)
                guard n > 0 else { return false }   // past the last block: HTTPRange counts the body
                block.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest.prefix(n)))
                rest = rest.dropFirst(n)
                if block.count == length {
                    guard deliver(index, block[...]) else { return false }
                    index += 1
                    block = []
                    block.reserveCapacity(Int(Blocks.range(index, size: size).count))
                }
            }
            return true
        })
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    /// Puts a block where readers find it, once there is room; false if
    /// the stream was cancelled meanwhile.
    private func deliver(_ index: UInt64, _ bytes: ArraySlice<UInt8>) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while ahead.count >= limit && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        ahead[index] = bytes
        next = index + 1
        condition.broadcast()
        return true
    }
}
