print("bgtop: under construction")
