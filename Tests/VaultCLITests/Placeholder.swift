import Testing
@Test func placeholderVaultCLITests() {}
