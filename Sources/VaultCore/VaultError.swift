/// Errors of the vault library. The terminal layer maps each to one message
/// and one exit code; the library itself never prints or exits.
public enum VaultError: Error, Equatable, Sendable {
    /// Stored data failed authentication or did not have its exact shape.
    /// Every such failure reads the same, whatever the cause, so the error
    /// reveals nothing about which check an attacker's edit tripped.
    case corruptedOrTampered
    /// A system call failed; `operation` names it, `errno` keeps the code.
    case system(operation: String, path: String?, errno: Int32)
    /// A value was outside what this format or operation allows.
    case invalidArgument(String)
}
