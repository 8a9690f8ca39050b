package sqlserver

import (
	"reflect"
	"testing"
)

func TestSplitSetStatement(t *testing.T) {
	st, ok, err := splitSetStatement("SET STATEMENT cluster_sync_commit = 'applied', @@session.sql_mode='' FOR INSERT INTO t VALUES ('for', 1)")
	if !ok || err != nil {
		t.Fatalf("not recognised: %v %v", ok, err)
	}
	if !reflect.DeepEqual(st.names, []string{"cluster_sync_commit", "sql_mode"}) {
		t.Errorf("names %q", st.names)
	}
	if st.set != "SET @@session.cluster_sync_commit = 'applied', @@session.sql_mode = ''" {
		t.Errorf("set %q", st.set)
	}
	if st.inner != " INSERT INTO t VALUES ('for', 1)" {
		t.Errorf("inner %q", st.inner)
	}
	// FOR inside quotes or a longer word is not the keyword.
	st, ok, err = splitSetStatement("set statement max_statement_time = 'for x' , sort_buffer_size=(1) for select 'before'")
	if !ok || err != nil || st.inner != " select 'before'" || len(st.names) != 2 {
		t.Errorf("quoted FOR: %+v %v %v", st, ok, err)
	}
	if _, ok, _ := splitSetStatement("SET @x = 1"); ok {
		t.Error("a plain SET was taken for SET STATEMENT")
	}
	for _, bad := range []string{"SET STATEMENT x = 1", "SET STATEMENT FOR SELECT 1", "SET STATEMENT x = 1 FOR   "} {
		if _, ok, err := splitSetStatement(bad); !ok || err == nil {
			t.Errorf("%q: ok=%v err=%v, want a syntax error", bad, ok, err)
		}
	}
}
