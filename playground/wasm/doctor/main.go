//go:build js && wasm

// Command doctor is the WebAssembly module of the playground's log doctor
// page: package service's doctor question registered as globalThis.distnav
// by package jsapi.
package main

import (
	"syscall/js"

	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/wasm/jsapi"
)

func main() {
	jsapi.RegisterDoctor(js.Global(), service.New())
	select {}
}
