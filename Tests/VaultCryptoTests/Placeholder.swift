import Testing
@Test func placeholderVaultCryptoTests() {}
