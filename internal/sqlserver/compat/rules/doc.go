// Package rules is MySQL's answers where go-mysql-server v0.20's analyzer
// gives others, as analyzer rules and the rewrites of a statement's text
// that come before the parser:
//
//   - NotIn: NOT IN and NOT EXISTS with NULLs and scalar subqueries;
//   - ExactSum: SUM and AVG of exact numbers as DECIMAL, STD as DOUBLE,
//     COUNT(DISTINCT) by collation (with distinct.go's keys);
//   - BranchType: CASE, IF, IFNULL and COALESCE over numbers typed as
//     MySQL types them; Overflow: integer arithmetic that fails on
//     overflow; RecursiveTypes: a recursive CTE's columns typed by its
//     first part;
//   - Quantified: ANY, SOME and ALL comparisons (QuantifiedFunctions);
//   - WindowFrame, windowrank.go, windownth.go and windowdefs.go: window
//     functions' default frame, ranks, NTH_VALUE and named windows;
//   - RewriteRollup (WITH ROLLUP), GroupOuter, groupconcat.go, aggwhere.go
//     (an aggregate where MySQL refuses one);
//   - HashJoin and SetDefault (ON DELETE/UPDATE SET DEFAULT refused, as
//     InnoDB does);
//   - the statement's text before the parser reads it: user variables
//     assigned inside expressions (assignvar.go), INTERVAL's compound
//     units and the routine syntax the parser does not know
//     (syntaxtext.go), and ENUM and SET arguments compared as text
//     (textargs.go).
//
// The rules' ids and their order are the SQL layer's (sqlserver's
// rules.go, newAnalyzerBuilder). A rule that changes an answer
// go-mysql-server's engine suites assert changes a client connection's
// statements only (compat.FromClient).
//
// It imports go-mysql-server, compat, compat/funcs, sqltext and weights.
// internal/sqlserver imports it; it imports no other part of the SQL
// layer.
package rules
