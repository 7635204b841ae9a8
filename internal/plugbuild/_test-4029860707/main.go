package main

//go:wasmexport answer
func answer() int32 { return 43 }

func main() {}
