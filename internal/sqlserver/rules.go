package sqlserver

import (
	"github.com/dolthub/go-mysql-server/sql/analyzer"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
)

// The analyzer rules this package adds to go-mysql-server's, each with its
// id. Ids are this package's own range (go-mysql-server's end below 1,000)
// and each is used once: go-mysql-server finds a rule by its id (to remove
// or replace it), so two rules of one id would be one rule to it.
const (
	readOnlyRuleID       analyzer.RuleId = 10_000 // cluster.go: writes on a secondary answer 1290
	notInRuleID          analyzer.RuleId = 10_001 // compat/rules/notin.go: NOT IN and NOT EXISTS of a subquery stay out of anti joins
	exactSumRuleID       analyzer.RuleId = 10_002 // compat/rules/exactsum.go: SUM and AVG of exact numbers give MySQL's DECIMAL results
	keepDeleteRuleID     analyzer.RuleId = 10_003 // deleteall.go: DELETE stays a DELETE
	castRuleID           analyzer.RuleId = 10_004 // cast.go
	branchTypeRuleID     analyzer.RuleId = 10_005 // compat/rules/branchtype.go: CASE, IF, IFNULL and COALESCE over numbers typed as MySQL does
	quantifiedRuleID     analyzer.RuleId = 10_006 // compat/rules/quantified.go: builds quantified comparisons
	overflowRuleID       analyzer.RuleId = 10_007 // compat/rules/overflow.go: integer arithmetic fails on overflow, as MySQL's does
	unionRowsRuleID      analyzer.RuleId = 10_008 // setop.go
	hashJoinRuleID       analyzer.RuleId = 10_009 // compat/rules/hashjoin.go
	groupOuterRuleID     analyzer.RuleId = 10_010 // compat/rules/groupouter.go
	setDefaultRuleID     analyzer.RuleId = 10_011 // compat/rules/fkdefault.go: foreign keys ON DELETE/UPDATE SET DEFAULT refused, as InnoDB does
	viewReadRuleID       analyzer.RuleId = 10_012 // implicitcommit.go (10_001 until it was found to share notInRuleID's id)
	indexOrderRuleID     analyzer.RuleId = 10_013 // indexorder.go (10_002 until it was found to share exactSumRuleID's id)
	windowFrameRuleID    analyzer.RuleId = 10_020 // compat/rules/windowframe.go: aggregate window functions get MySQL's default frame
	recursiveTypesRuleID analyzer.RuleId = 10_021 // compat/rules/recursivetypes.go: a recursive CTE's date and time columns typed as its first part
)

// allRuleIDs lists the ids above, for the test that keeps them unique.
var allRuleIDs = []analyzer.RuleId{
	readOnlyRuleID, notInRuleID, exactSumRuleID, keepDeleteRuleID, castRuleID, branchTypeRuleID,
	quantifiedRuleID, overflowRuleID, unionRowsRuleID, hashJoinRuleID, groupOuterRuleID,
	setDefaultRuleID, viewReadRuleID, indexOrderRuleID, windowFrameRuleID, recursiveTypesRuleID,
}

// newAnalyzerBuilder is go-mysql-server's analyzer with this package's
// rules, in the order they run (keepDeleteRule is added to
// go-mysql-server's AlwaysBeforeDefault rules by Install).
func newAnalyzerBuilder(provider *Provider) *analyzer.Builder {
	return analyzer.NewBuilder(provider).
		AddPreAnalyzeRule(readOnlyRuleID, readOnlyRule).
		AddPreAnalyzeRule(quantifiedRuleID, rules.Quantified).
		AddPreAnalyzeRule(notInRuleID, rules.NotIn).
		AddPreAnalyzeRule(castRuleID, castRule).
		AddPreAnalyzeRule(viewReadRuleID, viewReadRule).
		AddPreAnalyzeRule(setDefaultRuleID, rules.SetDefault).
		AddPostAnalyzeRule(windowFrameRuleID, rules.WindowFrame).
		AddPostAnalyzeRule(recursiveTypesRuleID, rules.RecursiveTypes).
		AddPostAnalyzeRule(exactSumRuleID, rules.ExactSum).
		AddPostAnalyzeRule(branchTypeRuleID, rules.BranchType).
		AddPostAnalyzeRule(overflowRuleID, rules.Overflow).
		AddPostAnalyzeRule(indexOrderRuleID, indexOrderRule).
		AddPostAnalyzeRule(unionRowsRuleID, unionRowsRule).
		AddPostAnalyzeRule(hashJoinRuleID, rules.HashJoin).
		AddPostAnalyzeRule(groupOuterRuleID, rules.GroupOuter).
		RemoveOnceAfterRule(replaceAggRule()).
		RemoveValidationRule(groupByRule.Id).
		AddPostValidationRule(groupByRule.Id, notForClients(groupByRule.Apply))
}
