def main():
    print("proton-viewer")
