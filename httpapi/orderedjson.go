package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// field is one key of a JSON object, kept in document order so tables show
// columns in the order the producer chose.
type field struct {
	key string
	val any
}

// object is a JSON object in document order.
type object []field

// decodeOrdered decodes raw into object, []any, string, json.Number, bool
// or nil.
func decodeOrdered(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return readValue(dec)
}

func readValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		obj := object{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key %v is not a string", kt)
			}
			v, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, field{key, v})
		}
		_, err := dec.Token() // '}'
		return obj, err
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token() // ']'
		return arr, err
	default:
		return nil, fmt.Errorf("unexpected %v", d)
	}
}
