package funcs

import (
	"fmt"
	"math/big"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// MySQL's bounds of a DECIMAL.
const (
	MaxDecimalPrecision = 65
	MaxDecimalScale     = 30
)

// ExactValue is an integer or decimal argument's value as a decimal.
func ExactValue(ctx *sql.Context, v any) (decimal.Decimal, error) {
	switch n := v.(type) {
	case decimal.Decimal:
		return n, nil
	case int8:
		return decimal.NewFromInt(int64(n)), nil
	case int16:
		return decimal.NewFromInt(int64(n)), nil
	case int32:
		return decimal.NewFromInt(int64(n)), nil
	case int64:
		return decimal.NewFromInt(n), nil
	case int:
		return decimal.NewFromInt(int64(n)), nil
	case uint8:
		return decimal.NewFromInt(int64(n)), nil
	case uint16:
		return decimal.NewFromInt(int64(n)), nil
	case uint32:
		return decimal.NewFromInt(int64(n)), nil
	case uint64:
		return decimal.NewFromBigInt(new(big.Int).SetUint64(n), 0), nil
	case uint:
		return decimal.NewFromBigInt(new(big.Int).SetUint64(uint64(n)), 0), nil
	}
	c, _, err := types.InternalDecimalType.Convert(ctx, v)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("sum of %T: %w", v, err)
	}
	return c.(decimal.Decimal), nil
}

func AsInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case int:
		return int64(x), true
	}
	return 0, false
}

func AsUint64(v any) (uint64, bool) {
	switch x := v.(type) {
	case uint64:
		return x, true
	case uint32:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint8:
		return uint64(x), true
	case uint:
		return uint64(x), true
	}
	return 0, false
}

// TextValue returns v's text when it is a string value.
func TextValue(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case []byte:
		return string(s), true
	}
	return "", false
}
