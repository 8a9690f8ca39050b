package binlog

import "strings"

// sqlModeBits are MariaDB's sql_mode flags as a Query event carries them
// (Q_SQL_MODE_CODE): the replica runs the statement under these.
var sqlModeBits = map[string]uint64{
	"REAL_AS_FLOAT": 1 << 0, "PIPES_AS_CONCAT": 1 << 1, "ANSI_QUOTES": 1 << 2, "IGNORE_SPACE": 1 << 3,
	"IGNORE_BAD_TABLE_OPTIONS": 1 << 4, "ONLY_FULL_GROUP_BY": 1 << 5, "NO_UNSIGNED_SUBTRACTION": 1 << 6,
	"NO_DIR_IN_CREATE": 1 << 7, "POSTGRESQL": 1 << 8, "ORACLE": 1 << 9, "MSSQL": 1 << 10, "DB2": 1 << 11,
	"MAXDB": 1 << 12, "NO_KEY_OPTIONS": 1 << 13, "NO_TABLE_OPTIONS": 1 << 14, "NO_FIELD_OPTIONS": 1 << 15,
	"MYSQL323": 1 << 16, "MYSQL40": 1 << 17, "ANSI": 1 << 18, "NO_AUTO_VALUE_ON_ZERO": 1 << 19,
	"NO_BACKSLASH_ESCAPES": 1 << 20, "STRICT_TRANS_TABLES": 1 << 21, "STRICT_ALL_TABLES": 1 << 22,
	"NO_ZERO_IN_DATE": 1 << 23, "NO_ZERO_DATE": 1 << 24, "ALLOW_INVALID_DATES": 1 << 25,
	"ERROR_FOR_DIVISION_BY_ZERO": 1 << 26, "TRADITIONAL": 1 << 27, "NO_AUTO_CREATE_USER": 1 << 28,
	"HIGH_NOT_PRECEDENCE": 1 << 29, "NO_ENGINE_SUBSTITUTION": 1 << 30, "PAD_CHAR_TO_FULL_LENGTH": 1 << 31,
	"EMPTY_STRING_IS_NULL": 1 << 32, "SIMULTANEOUS_ASSIGNMENT": 1 << 33, "TIME_ROUND_FRACTIONAL": 1 << 34,
}

// SQLModeBits is the Query event's sql_mode for a comma-separated list of
// mode names. Names MariaDB has no flag for (MySQL 8's) are left out.
func SQLModeBits(modes string) uint64 {
	var bits uint64
	for _, m := range strings.Split(modes, ",") {
		bits |= sqlModeBits[strings.ToUpper(strings.TrimSpace(m))]
	}
	return bits
}
