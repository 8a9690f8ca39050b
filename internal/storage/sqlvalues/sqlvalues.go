package sqlvalues

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/storage"
)

// Tags are part of the disk format: never reuse or renumber one.
const (
	tagTimespan byte = 64 // TIME: varint of microseconds
	tagJSON     byte = 65 // JSON: the document's text
	tagGeometry byte = 66 // spatial types: EWKB (SRID, byte order, type, data)
)

// init registers the codecs: importing the package completes the row
// encoding (storage's registry is the storage layer's own, not
// go-mysql-server's, so this is not part of sqlserver.Install).
func init() {
	storage.RegisterValueType(storage.ValueType{
		Tag:   tagTimespan,
		Match: func(v any) bool { _, ok := v.(types.Timespan); return ok },
		Encode: func(dst []byte, v any) []byte {
			return binary.AppendVarint(dst, int64(v.(types.Timespan)))
		},
		Decode: func(b []byte) (any, error) {
			x, n := binary.Varint(b)
			if n <= 0 || n != len(b) {
				return nil, fmt.Errorf("time value of %d bytes", len(b))
			}
			return types.Timespan(x), nil
		},
	})
	storage.RegisterValueType(storage.ValueType{
		Tag:   tagJSON,
		Match: func(v any) bool { _, ok := v.(sql.JSONWrapper); return ok },
		Encode: func(dst []byte, v any) []byte {
			b, err := types.MarshallJson(v.(sql.JSONWrapper))
			if err != nil {
				// Every document the engine holds came from valid JSON.
				panic(fmt.Sprintf("sqlvalues: JSON value %v does not encode: %v", v, err))
			}
			return append(dst, b...)
		},
		Decode: func(b []byte) (any, error) {
			var doc any
			if err := json.Unmarshal(b, &doc); err != nil {
				return nil, err
			}
			return types.JSONDocument{Val: doc}, nil
		},
	})
	storage.RegisterValueType(storage.ValueType{
		Tag:   tagGeometry,
		Match: func(v any) bool { _, ok := v.(types.GeometryValue); return ok },
		Encode: func(dst []byte, v any) []byte {
			return append(dst, v.(types.GeometryValue).Serialize()...)
		},
		Decode: func(b []byte) (any, error) {
			v, _, err := types.GeometryType{}.Convert(context.Background(), b)
			return v, err
		},
	})
}
