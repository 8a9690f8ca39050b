package funcs

// Aggregates are the aggregate functions by name, in lower case: the
// functions whose wrong number of arguments MySQL's parser refuses (1064),
// not its function table (1582).
var Aggregates = map[string]bool{"sum": true, "avg": true, "count": true, "min": true, "max": true,
	"group_concat": true, "std": true, "stddev": true, "stddev_pop": true, "stddev_samp": true,
	"variance": true, "var_pop": true, "var_samp": true, "bit_and": true, "bit_or": true, "bit_xor": true,
	"json_arrayagg": true, "json_objectagg": true}
