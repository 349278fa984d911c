// A multipart receiver with Go's standard library (net/http, mime/multipart): each file
// part streamed to a file of its own under DIR with its SHA-256, a JSON receipt answered.
package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
)

type file struct {
	Name     string `json:"name"`
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
	StoredAs string `json:"storedAs"`
}

func main() {
	dir := os.Args[2]
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		reader, err := r.MultipartReader()
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		files := []file{}
		for {
			part, err := reader.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			if part.FileName() == "" {
				io.Copy(io.Discard, part)
				continue
			}
			random := make([]byte, 16)
			rand.Read(random)
			name := hex.EncodeToString(random)
			out, err := os.Create(filepath.Join(dir, name))
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			hash := sha256.New()
			size, err := io.Copy(io.MultiWriter(out, hash), part)
			out.Close()
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			files = append(files, file{part.FormName(), part.FileName(), size, hex.EncodeToString(hash.Sum(nil)), name})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]interface{}{"files": files})
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:"+os.Args[1], nil))
}
