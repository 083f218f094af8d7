// The vault command line; see Terminal.swift for all output.
print("vault 0.1.0")
