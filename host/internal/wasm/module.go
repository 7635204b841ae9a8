package wasm

import (
	"bytes"
	"errors"
	"fmt"
)

// moduleInfo is what Load needs to know about a module before running
// it: what it imports and exports. Reading it from the binary directly is
// cheap; compiling the module a second time to ask wazero would decode and
// validate megabytes again (Extism compiles it anyway, and that compile
// validates the whole module).
type moduleInfo struct {
	funcImports   []importRef // imported functions
	memoryImports []importRef
	exports       map[string]bool // exported functions
}

type importRef struct{ module, name string }

var wasmMagic = []byte("\x00asm\x01\x00\x00\x00")

// Section ids and import/export kinds of the Wasm binary format.
const (
	secImport = 2
	secExport = 7

	kindFunc   = 0
	kindTable  = 1
	kindMemory = 2
	kindGlobal = 3
	kindTag    = 4
)

var errTruncated = errors.New("truncated")

// reader walks a Wasm binary; every read is bounds-checked, so a hostile
// module yields an error, never a panic.
type reader struct {
	b   []byte
	off int
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

// uleb reads an unsigned LEB128 of at most bits bits.
func (r *reader) uleb(bits uint) (uint64, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= bits+7 {
			return 0, errors.New("integer too long")
		}
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
}

func (r *reader) u32() (uint32, error) {
	v, err := r.uleb(32)
	if v > 1<<32-1 {
		return 0, errors.New("integer too large")
	}
	return uint32(v), err
}

func (r *reader) bytes(n uint32) ([]byte, error) {
	if uint64(r.off)+uint64(n) > uint64(len(r.b)) {
		return nil, errTruncated
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s, nil
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	return string(b), err
}

// limits skips a table or memory limits (memory64 and shared included).
func (r *reader) limits() error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if flags > 7 {
		return fmt.Errorf("bad limits flags %#x", flags)
	}
	bits := uint(32)
	if flags&4 != 0 {
		bits = 64
	}
	if _, err := r.uleb(bits); err != nil {
		return err
	}
	if flags&1 != 0 {
		_, err = r.uleb(bits)
	}
	return err
}

// inspectModule reads the import and export sections of a Wasm binary.
func inspectModule(b []byte) (moduleInfo, error) {
	info := moduleInfo{exports: map[string]bool{}}
	if !bytes.HasPrefix(b, wasmMagic) {
		return info, errors.New("no WebAssembly version 1 header (\\0asm)")
	}
	r := &reader{b: b, off: len(wasmMagic)}
	for r.off < len(b) {
		id, err := r.byte()
		if err != nil {
			return info, err
		}
		size, err := r.u32()
		if err != nil {
			return info, fmt.Errorf("section %d: %w", id, err)
		}
		body, err := r.bytes(size)
		if err != nil {
			return info, fmt.Errorf("section %d: %w", id, err)
		}
		s := &reader{b: body}
		switch id {
		case secImport:
			if err := info.readImports(s); err != nil {
				return info, fmt.Errorf("import section: %w", err)
			}
		case secExport:
			if err := info.readExports(s); err != nil {
				return info, fmt.Errorf("export section: %w", err)
			}
		}
	}
	return info, nil
}

func (info *moduleInfo) readImports(s *reader) error {
	return s.vector(func() error {
		mod, err := s.name()
		if err != nil {
			return err
		}
		name, kind, err := s.entity()
		if err != nil {
			return err
		}
		ref := importRef{mod, name}
		switch kind {
		case kindFunc, kindTag:
			if kind == kindTag {
				if _, err := s.byte(); err != nil { // attribute
					return err
				}
			}
			if _, err := s.u32(); err != nil {
				return err
			}
			if kind == kindFunc {
				info.funcImports = append(info.funcImports, ref)
			}
		case kindTable:
			if _, err := s.byte(); err != nil { // reference type
				return err
			}
			if err := s.limits(); err != nil {
				return err
			}
		case kindMemory:
			if err := s.limits(); err != nil {
				return err
			}
			info.memoryImports = append(info.memoryImports, ref)
		case kindGlobal:
			if _, err := s.bytes(2); err != nil { // value type, mutability
				return err
			}
		default:
			return fmt.Errorf("import %s.%s has unknown kind %#x", mod, name, kind)
		}
		return nil
	})
}

func (info *moduleInfo) readExports(s *reader) error {
	return s.vector(func() error {
		name, kind, err := s.entity()
		if err != nil {
			return err
		}
		if _, err := s.u32(); err != nil { // index
			return err
		}
		if kind == kindFunc {
			info.exports[name] = true
		}
		return nil
	})
}

// vector reads a vector of the binary format: its length, then each
// element with elem.
func (r *reader) vector(elem func() error) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for range n {
		if err := elem(); err != nil {
			return err
		}
	}
	return nil
}

// entity reads what an import and an export both start with after the
// module name: the entity's name and its kind.
func (r *reader) entity() (string, byte, error) {
	name, err := r.name()
	if err != nil {
		return "", 0, err
	}
	kind, err := r.byte()
	return name, kind, err
}
