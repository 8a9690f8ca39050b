package replica

import (
	"encoding/json"
	"fmt"
	"sort"
)

// PositionDatabase is the database that holds miraj.gtid_slave_pos, which
// every group's transaction writes: it always exists once the replica has
// started, so that a group whose databases are gone (DROP DATABASE) still
// has its position recorded somewhere.
const PositionDatabase = "miraj"

// record is what each group commits in every database it writes (as a
// catalog object, in the same per-database commit as the rows): Miraj's
// journal is per database, so a group over several databases is several
// commits, and a crash can fall between them. After a restart, the record
// with the highest Counter names the last group and the databases it
// wrote: if all of them hold it, the group is complete and the replica
// resumes after it (Pos); otherwise it resumes before it (Prev) and, when
// the group comes again, skips the databases that have it.
type record struct {
	// Counter numbers the groups applied by this server, 1 up.
	Counter uint64 `json:"c"`
	Pos     string `json:"pos"`  // gtid_slave_pos after the group
	Prev    string `json:"prev"` // gtid_slave_pos before it
	// DBs are the databases the group wrote, sorted; PositionDatabase
	// among them.
	DBs []string `json:"dbs"`
	// File and FilePos are the source's binary log position after the
	// group (MASTER_USE_GTID = no resumes from them).
	File        string `json:"file,omitempty"`
	FilePos     uint64 `json:"fpos,omitempty"`
	PrevFile    string `json:"pfile,omitempty"`
	PrevFilePos uint64 `json:"pfpos,omitempty"`
}

func (r record) encode() []byte {
	b, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("replica: encode record %+v: %v", r, err))
	}
	return b
}

// resumePoint is where the replica starts after a restart.
type resumePoint struct {
	pos     position
	file    string
	filePos uint64
	counter uint64
	// done are the databases that committed their part of the group
	// that comes next (a group cut by a crash): its writes there are
	// skipped when it is applied again.
	done map[string]bool
}

// resume reads the records found in the databases (by name); exists
// says whether a database is there (one dropped since has nothing to
// redo).
func resume(found map[string][]byte, exists func(db string) bool) (resumePoint, error) {
	recs := map[string]record{}
	var last record
	lastDB := ""
	names := make([]string, 0, len(found))
	for db := range found {
		names = append(names, db)
	}
	sort.Strings(names)
	for _, db := range names {
		var r record
		if err := json.Unmarshal(found[db], &r); err != nil {
			return resumePoint{}, fmt.Errorf("replica: position record of database %s: %w", db, err)
		}
		recs[db] = r
		if r.Counter > last.Counter {
			last, lastDB = r, db
		}
	}
	if lastDB == "" {
		return resumePoint{pos: position{}}, nil
	}
	rp := resumePoint{counter: last.Counter}
	done := map[string]bool{}
	for _, db := range last.DBs {
		if r, ok := recs[db]; ok && r.Counter == last.Counter {
			done[db] = true
		}
	}
	complete := true
	for _, db := range last.DBs {
		if exists(db) && !done[db] {
			complete = false
		}
	}
	var err error
	if complete {
		rp.pos, err = parsePosition(last.Pos)
		rp.file, rp.filePos = last.File, last.FilePos
	} else {
		rp.pos, err = parsePosition(last.Prev)
		rp.file, rp.filePos = last.PrevFile, last.PrevFilePos
		rp.done = done
	}
	return rp, err
}
