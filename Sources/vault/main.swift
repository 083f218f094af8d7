print("vault")
