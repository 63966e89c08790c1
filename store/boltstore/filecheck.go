package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"

	"github.com/switchyard-ai/switchyard/store"
)

// bbolt's on-disk meta page (go.etcd.io/bbolt/internal/common): a 16-byte page header, then
// magic, version, page size, flags (4 bytes each), the root bucket (root page id, sequence),
// the freelist page id, the high-water page id, the transaction id (8 bytes each) and an
// FNV-64a checksum of everything before it. Pages 0 and 1 are the two meta pages.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16
	metaChecksumOff  = 56 // offset of the checksum inside the meta, after the page header
	metaSize         = metaChecksumOff + 8
	minBoltPageSize  = 512
	maxBoltPageSize  = 1 << 20
	fallbackPageSize = 4096
)

// boltMeta is the part of a meta page checkFile needs.
type boltMeta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64 // high-water mark: pages [0, pgid) are in use
	txid     uint64
}

// parseMeta decodes and validates the meta at the start of page (which includes the page
// header). It reports why the meta is invalid.
func parseMeta(page []byte) (boltMeta, error) {
	if len(page) < pageHeaderSize+metaSize {
		return boltMeta{}, fmt.Errorf("meta page is cut short")
	}
	m := page[pageHeaderSize : pageHeaderSize+metaSize]
	le := binary.LittleEndian
	if le.Uint32(m[0:]) != boltMagic {
		return boltMeta{}, fmt.Errorf("meta page has no bbolt magic number")
	}
	if v := le.Uint32(m[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("meta page has format version %d, want %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaChecksumOff])
	if h.Sum64() != le.Uint64(m[metaChecksumOff:]) {
		return boltMeta{}, fmt.Errorf("meta page checksum does not match")
	}
	return boltMeta{
		pageSize: le.Uint32(m[8:]),
		root:     le.Uint64(m[16:]),
		freelist: le.Uint64(m[32:]),
		pgid:     le.Uint64(m[40:]),
		txid:     le.Uint64(m[48:]),
	}, nil
}

// checkFile verifies, before bbolt maps it, that the database file at path is whole: bbolt
// trusts the file and a truncated one makes it fault (SIGSEGV/SIGBUS) instead of returning an
// error. A missing or empty file is a new database and passes. The checks: the file holds at
// least the two meta pages, its size is a multiple of the page size, at least one meta page
// is valid (magic, version, checksum), and the newest valid meta's pages all lie inside the
// file. Failures match store.ErrCorrupt and name the file and what to do.
func checkFile(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fileError("open", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileError("stat", path, err)
	}
	size := fi.Size()
	if size == 0 {
		return nil
	}
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("boltstore: %s is damaged (%s): restore it from a backup, or move it aside to start with an empty database: %w",
			path, fmt.Sprintf(format, args...), store.ErrCorrupt)
	}
	readPage := func(off, n int64) ([]byte, error) {
		buf := make([]byte, n)
		if off >= size {
			return nil, io.ErrUnexpectedEOF
		}
		k, err := f.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return nil, err
		}
		return buf[:k], nil
	}
	first, err := readPage(0, pageHeaderSize+metaSize)
	if err != nil {
		return fileError("read", path, err)
	}
	meta0, err0 := parseMeta(first)
	pageSize := int64(fallbackPageSize)
	if err0 == nil {
		pageSize = int64(meta0.pageSize)
	}
	if pageSize < minBoltPageSize || pageSize > maxBoltPageSize || pageSize&(pageSize-1) != 0 {
		return corrupt("page size %d in the first meta page is not a valid bbolt page size", pageSize)
	}
	if size < 2*pageSize {
		return corrupt("%d bytes, less than the two %d-byte meta pages", size, pageSize)
	}
	if size%pageSize != 0 {
		return corrupt("%d bytes is not a whole number of %d-byte pages; the file was cut short", size, pageSize)
	}
	second, err := readPage(pageSize, pageHeaderSize+metaSize)
	if err != nil {
		return fileError("read", path, err)
	}
	meta1, err1 := parseMeta(second)
	if err1 == nil && int64(meta1.pageSize) != pageSize {
		err1 = fmt.Errorf("meta page size %d differs from %d", meta1.pageSize, pageSize)
	}
	var m boltMeta
	switch {
	case err0 == nil && err1 == nil:
		m = meta0
		if meta1.txid > meta0.txid {
			m = meta1
		}
	case err0 == nil:
		m = meta0
	case err1 == nil:
		m = meta1
	default:
		return corrupt("both meta pages are invalid: %v; %v", err0, err1)
	}
	pages := size / pageSize
	if m.pgid < 2 || m.pgid > uint64(pages) {
		return corrupt("the database uses %d pages but the file holds %d; the file was cut short", m.pgid, pages)
	}
	if m.root >= m.pgid || (m.freelist >= m.pgid && m.freelist != ^uint64(0)) {
		return corrupt("the meta page points past the end of the data")
	}
	return nil
}

// fileError is err from op on path, naming the file once: an *fs.PathError names it already.
func fileError(op, path string, err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return fmt.Errorf("boltstore: %w", err)
	}
	return fmt.Errorf("boltstore: %s %s: %w", op, path, err)
}
