import Testing
@Test func placeholderVaultCoreTests() {}
