// A Go caller of libstagehand through cgo (pkg-config stagehand): several goroutines prove the
// same witness through the blocking call, one more through submit and wait, and the errors a
// caller tells apart by their codes are checked.
//
//	go run . <zkey> <wtns> <out dir>
//
// writes <out dir>/proof-N.json and public-N.json for each proof; exit status 0 only when every
// step did what it should.
package main

/*
#cgo pkg-config: stagehand
#include <stdlib.h>
#include <stagehand/stagehand.h>
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// Engine wraps the C handle; its methods turn status codes into Go errors.
type Engine struct{ handle *C.stagehand_engine }

// Error is a failed call: its status code and message.
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", C.GoString(C.stagehand_status_name(C.int(e.Code))), e.Message)
}

const errLen = 1024

func callError(status C.int, err []C.char) error {
	if status == C.STAGEHAND_OK {
		return nil
	}
	return &Error{Code: int(status), Message: C.GoString(&err[0])}
}

func NewEngine(configPath string) (*Engine, error) {
	err := make([]C.char, errLen)
	var path *C.char
	if configPath != "" {
		path = C.CString(configPath)
		defer C.free(unsafe.Pointer(path))
	}
	handle := C.stagehand_engine_create(path, &err[0], errLen)
	if handle == nil {
		return nil, fmt.Errorf("stagehand_engine_create: %s", C.GoString(&err[0]))
	}
	return &Engine{handle}, nil
}

func (e *Engine) Close() { C.stagehand_engine_destroy(e.handle) }

func (e *Engine) LoadKey(name, zkeyPath string) error {
	err := make([]C.char, errLen)
	cName, cPath := C.CString(name), C.CString(zkeyPath)
	defer C.free(unsafe.Pointer(cName))
	defer C.free(unsafe.Pointer(cPath))
	return callError(C.stagehand_key_load(e.handle, cName, cPath, &err[0], errLen), err)
}

func (e *Engine) UnloadKey(name string) error {
	err := make([]C.char, errLen)
	cName := C.CString(name)
	defer C.free(unsafe.Pointer(cName))
	return callError(C.stagehand_key_unload(e.handle, cName, &err[0], errLen), err)
}

// witnessPointer: the bytes in C memory (cgo must not keep Go pointers past the call; the engine
// copies them anyway).
func witnessPointer(wtns []byte) (*C.uint8_t, func()) {
	if len(wtns) == 0 {
		return nil, func() {}
	}
	p := C.CBytes(wtns)
	return (*C.uint8_t)(p), func() { C.free(p) }
}

func takeString(p *C.char) string {
	if p == nil {
		return ""
	}
	defer C.stagehand_free(unsafe.Pointer(p))
	return C.GoString(p)
}

// Prove blocks until the proof is made: snarkjs's proof.json and public.json texts.
func (e *Engine) Prove(key string, wtns []byte) (string, string, error) {
	err := make([]C.char, errLen)
	cKey := C.CString(key)
	defer C.free(unsafe.Pointer(cKey))
	data, release := witnessPointer(wtns)
	defer release()
	var proof, public *C.char
	status := C.stagehand_prove(e.handle, cKey, data, C.size_t(len(wtns)), &proof, &public, &err[0], errLen)
	if status != C.STAGEHAND_OK {
		return "", "", callError(status, err)
	}
	return takeString(proof), takeString(public), nil
}

// Submit queues a proof (waiting for room when the queue is full) and returns its id.
func (e *Engine) Submit(key string, wtns []byte) (uint64, error) {
	err := make([]C.char, errLen)
	cKey := C.CString(key)
	defer C.free(unsafe.Pointer(cKey))
	data, release := witnessPointer(wtns)
	defer release()
	var id C.uint64_t
	status := C.stagehand_submit(e.handle, cKey, data, C.size_t(len(wtns)), 1, nil, nil, &id, &err[0], errLen)
	return uint64(id), callError(status, err)
}

// Wait blocks until the proof ends.
func (e *Engine) Wait(id uint64) (string, string, error) {
	err := make([]C.char, errLen)
	var proof, public *C.char
	status := C.stagehand_wait(e.handle, C.uint64_t(id), &proof, &public, &err[0], errLen)
	if status != C.STAGEHAND_OK {
		return "", "", callError(status, err)
	}
	return takeString(proof), takeString(public), nil
}

func (e *Engine) Status() string { return takeString(C.stagehand_status_json(e.handle)) }

func code(err error) int {
	if e, ok := err.(*Error); ok {
		return e.Code
	}
	return -1
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go run . <zkey> <wtns> <out dir>")
		os.Exit(2)
	}
	zkey, wtnsPath, outDir := os.Args[1], os.Args[2], os.Args[3]
	failures := 0
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
		failures++
	}
	wtns, err := os.ReadFile(wtnsPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	engine, err := NewEngine("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := engine.LoadKey("circuit", zkey); err != nil {
		fail("load: %v", err)
	}

	const goroutines = 4
	var wg sync.WaitGroup
	var mutex sync.Mutex
	write := func(n int, proof, public string) {
		mutex.Lock()
		defer mutex.Unlock()
		if err := os.WriteFile(filepath.Join(outDir, fmt.Sprintf("proof-%d.json", n)), []byte(proof), 0o644); err != nil {
			fail("%v", err)
		}
		if err := os.WriteFile(filepath.Join(outDir, fmt.Sprintf("public-%d.json", n)), []byte(public), 0o644); err != nil {
			fail("%v", err)
		}
	}
	for n := 0; n < goroutines; n++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			proof, public, err := engine.Prove("circuit", wtns)
			if err != nil {
				mutex.Lock()
				fail("prove %d: %v", n, err)
				mutex.Unlock()
				return
			}
			write(n, proof, public)
		}(n)
	}
	wg.Wait()

	id, err := engine.Submit("circuit", wtns)
	if err != nil {
		fail("submit: %v", err)
	} else if proof, public, err := engine.Wait(id); err != nil {
		fail("wait: %v", err)
	} else {
		write(goroutines, proof, public)
	}

	if _, _, err := engine.Prove("circuit", wtns[:len(wtns)/2]); code(err) != C.STAGEHAND_ERROR_BAD_WITNESS {
		fail("a truncated witness must be bad_witness, got %v", err)
	} else {
		fmt.Println("ok: a truncated witness:", err)
	}
	if _, _, err := engine.Prove("no-such-key", wtns); code(err) != C.STAGEHAND_ERROR_UNKNOWN_KEY {
		fail("an unknown key must be unknown_key, got %v", err)
	}
	if status := engine.Status(); !strings.Contains(status, fmt.Sprintf(`"done":%d`, goroutines+1)) {
		fail("the status must count %d proofs done: %s", goroutines+1, status)
	}
	if err := engine.UnloadKey("circuit"); err != nil {
		fail("unload: %v", err)
	}
	engine.Close()
	if failures != 0 {
		fmt.Fprintf(os.Stderr, "%d check(s) failed\n", failures)
		os.Exit(1)
	}
	fmt.Println("ok: the Go caller")
}
