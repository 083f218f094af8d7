/// Why `vault mount` could not put the vault in place. The CLI words them
/// (ErrorReport.swift).
public enum MountError: Error, Equatable, Sendable {
    /// libfuse would not start a session (fuse_new failed: no /dev/fuse,
    /// or the kernel module is not loaded).
    case fuseDidNotStart
    /// fuse_mount failed on `mountpoint` (fusermount3 missing, or refused).
    case mountFailed(mountpoint: String)
}
