package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"
)

// File is one file of a bundle: what cloud-init's write_files writes today, less the owner,
// which is always root (FromCloudInit refuses any other).
type File struct {
	// Mode is the permission bits (0600, 0644, 0700); nothing else (no setuid, no type).
	Mode fs.FileMode
	// Content is the file's bytes, as the node should see them (not encoded).
	Content []byte
}

// DigestPrefix starts every digest: the algorithm, as in kubeadm's caCertHashes.
const DigestPrefix = "sha256:"

// epoch is every entry's modification time, so that the same files make the same archive. The
// node's tar is told not to restore it (-m): files get the time they are written, as with
// write_files.
var epoch = time.Unix(0, 0).UTC()

// Pack makes the bundle of files (absolute paths to files) and its digest: a tar of regular files
// in path order, each owned by root (uid and gid 0) with its mode and the fixed epoch time,
// gzip-compressed without a name or time in the header. The same files give the same bytes, so a
// bundle's digest, and the stub that names it, change only when a file does (as long as Go's
// compress/flate output does not change between the provider's Go releases, the same bet
// bootstrap.PackUserData makes for today's user data).
func Pack(files map[string]File) (archive []byte, digest string, err error) {
	if len(files) == 0 {
		return nil, "", errors.New("a bundle needs at least one file")
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // BestCompression is a valid level
	tw := tar.NewWriter(zw)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		f := files[p]
		if err := checkPath(p); err != nil {
			return nil, "", err
		}
		if f.Mode&^fs.ModePerm != 0 {
			return nil, "", fmt.Errorf("%s: mode %v has bits other than the permissions", p, f.Mode)
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg, Name: strings.TrimPrefix(p, "/"), Size: int64(len(f.Content)),
			Mode: int64(f.Mode), Uname: "root", Gname: "root", ModTime: epoch,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, "", fmt.Errorf("%s: %w", p, err)
		}
		if _, err := tw.Write(f.Content); err != nil {
			return nil, "", fmt.Errorf("%s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), Digest(buf.Bytes()), nil
}

// Digest is "sha256:<hex>" of an archive: what the stub checks with sha256sum before it unpacks.
func Digest(archive []byte) string {
	sum := sha256.Sum256(archive)
	return DigestPrefix + hex.EncodeToString(sum[:])
}

// checkPath accepts an absolute, clean path below / (what write_files takes, and what tar
// unpacks under the node's root without a "..").
func checkPath(p string) error {
	if !strings.HasPrefix(p, "/") || p == "/" || path.Clean(p) != p {
		return fmt.Errorf("%q is not a clean absolute path of a file", p)
	}
	return nil
}

// Unpack checks an archive against its digest and returns its files by absolute path. Only what
// Pack makes is accepted: regular files with clean relative names and permission bits, each
// once. The digest is checked first, so nothing of a tampered archive is read.
func Unpack(archive []byte, digest string) (map[string]File, error) {
	if got := Digest(archive); got != digest {
		return nil, fmt.Errorf("bundle digest is %s, not the expected %s: refusing it", got, digest)
	}
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("bundle is not gzip: %w", err)
	}
	tr := tar.NewReader(zr)
	files := map[string]File{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bundle is not a tar archive: %w", err)
		}
		p := "/" + hdr.Name
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("bundle entry %s is not a regular file", p)
		}
		if err := checkPath(p); err != nil {
			return nil, fmt.Errorf("bundle entry: %w", err)
		}
		if _, dup := files[p]; dup {
			return nil, fmt.Errorf("bundle entry %s appears twice", p)
		}
		if hdr.Mode&^int64(fs.ModePerm) != 0 {
			return nil, fmt.Errorf("bundle entry %s has mode %o, more than permission bits", p, hdr.Mode)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("bundle entry %s: %w", p, err)
		}
		files[p] = File{Mode: fs.FileMode(hdr.Mode), Content: content}
	}
	return files, nil
}
