/// The hook of the constant-time check (`make ct`, CT/CTMLKEM): the harness
/// marks secret inputs undefined for valgrind, and the library calls
/// `declassify` at the few places where a value computed from secrets is
/// public by design, so that branching on it is not reported. Today that is
/// one: ML-KEM's rho, half of G(d || k), which is published in ek and drives
/// SampleNTT's rejection loop (as BoringSSL's CONSTTIME_DECLASSIFY does).
/// Without a harness the hook is nil and `declassify` does nothing.
enum ConstantTime {
    /// Set once by the harness before any crypto runs; never in the library or the vault.
    nonisolated(unsafe) static var declassifyHook: ((UnsafeRawBufferPointer) -> Void)?

    @inline(__always)
    static func declassify(_ bytes: UnsafeRawBufferPointer) {
        declassifyHook?(bytes)
    }
}
