//go:build js && wasm

// Command algorithms is the WebAssembly module of the algorithms page of the playground:
// package service's PageTune question (and the built-in systems) registered as
// globalThis.distnav by package jsapi. One binary per page, so that each
// page downloads only the code its question reaches.
package main

import (
	"syscall/js"

	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/wasm/jsapi"
)

func main() {
	s := service.New()
	jsapi.RegisterModel(js.Global(), s, map[string]jsapi.Question{service.PageTune: s.AnswerTune})
	select {}
}
