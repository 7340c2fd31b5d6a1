//go:build js

package json

import (
	"encoding/json"
	"io"
)

type (
	Decoder     = json.Decoder
	Encoder     = json.Encoder
	Number      = json.Number
	Delim       = json.Delim
	RawMessage  = json.RawMessage
	SyntaxError = json.SyntaxError
)

func Marshal(v any) ([]byte, error) { return json.Marshal(v) }

func MarshalIndent(v any, prefix, indent string) ([]byte, error) {
	return json.MarshalIndent(v, prefix, indent)
}

func Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

func NewDecoder(r io.Reader) *Decoder { return json.NewDecoder(r) }

func NewEncoder(w io.Writer) *Encoder { return json.NewEncoder(w) }
