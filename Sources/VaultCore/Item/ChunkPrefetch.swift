import Dispatch
import System

/// One chunk being opened ahead (for `ItemReader.contentStream`), on a
/// shared concurrent queue, into a buffer it owns. The work holds this object and the reader only (never the
/// `RandomAccessContent` that started it) and never waits for anything, so
/// it always ends, and ends by itself when nobody wants its chunk any more.
final class ChunkPrefetch: @unchecked Sendable {
    // @unchecked: `result` is written once on the queue before `done`
    // leaves, and read only after `wait()`; the buffer likewise.
    let index: UInt64
    let buffer: PageBuffer
    private var result: Result<Int, Error>?
    private let done = DispatchGroup()
    private static let queue = DispatchQueue(label: "vault.random-access.prefetch", attributes: .concurrent)

    init(index: UInt64, into buffer: PageBuffer, reader: ItemReader) {
        self.index = index
        self.buffer = buffer
        Self.queue.async(group: done) { [self] in
            result = Result { try reader.readChunk(index, into: buffer.raw) }
        }
    }

    /// How the chunk opened (its content bytes in `buffer`), once it has.
    func wait() -> Result<Int, Error> {
        done.wait()
        return result!
    }
}
