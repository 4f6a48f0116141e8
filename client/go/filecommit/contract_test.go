package filecommit_test

// The contract test: drives a running Spark Connect server with the filecommit plugin from Go.
// tests/test_go_client.py runs it against the pytest session's server and checks the tables it
// wrote with delta-rs; run by hand with
//
//	FILECOMMIT_GO_REMOTE=127.0.0.1:15002 FILECOMMIT_GO_TABLE_DIR=/tmp/x \
//	FILECOMMIT_GO_REPORT=/tmp/x/report.json go test ./...
//
// Environment: FILECOMMIT_GO_REMOTE (host:port, required), FILECOMMIT_GO_TOKEN (bearer token,
// optional), FILECOMMIT_GO_USER (the user id, default go-contract-test), FILECOMMIT_GO_TLS_CA (a PEM
// file of trusted certificate authorities: TLS, through a TLS-terminating proxy), FILECOMMIT_GO_TABLE_DIR (an existing directory the server may write under,
// required), FILECOMMIT_GO_REPORT (where the JSON report for the Python side goes, required).

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"filecommit.io/client/go/filecommit"
	fcpb "filecommit.io/client/go/gen/filecommit/v1"
	sparkpb "filecommit.io/client/go/gen/spark/connect"
	"google.golang.org/protobuf/encoding/protojson"
)

// report is what the Python side checks against delta-rs: per table, the streamed file actions
// (protojson) and summaries in command order.
type report struct {
	Tables map[string][]json.RawMessage `json:"tables"`
}

func env(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Skipf("%s not set: this test runs against a live server (tests/test_go_client.py)", name)
	}
	return v
}

func TestContract(t *testing.T) {
	remote := env(t, "FILECOMMIT_GO_REMOTE")
	dir := env(t, "FILECOMMIT_GO_TABLE_DIR")
	reportPath := env(t, "FILECOMMIT_GO_REPORT")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	user := os.Getenv("FILECOMMIT_GO_USER")
	if user == "" {
		user = "go-contract-test"
	}
	var s *filecommit.Session
	var err error
	if ca := os.Getenv("FILECOMMIT_GO_TLS_CA"); ca != "" {
		s, err = filecommit.DialTLS(remote, user, os.Getenv("FILECOMMIT_GO_TOKEN"), ca)
	} else {
		s, err = filecommit.Dial(remote, user, os.Getenv("FILECOMMIT_GO_TOKEN"))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	out := report{Tables: map[string][]json.RawMessage{}}
	record := func(table string, r *filecommit.Result) {
		actions := &fcpb.FileActionBatch{Actions: r.Actions}
		a, err := protojson.Marshal(actions)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := protojson.Marshal(r.Summary)
		if err != nil {
			t.Fatal(err)
		}
		entry, _ := json.Marshal(map[string]json.RawMessage{"actions": a, "summary": sum})
		out.Tables[table] = append(out.Tables[table], entry)
	}

	// 1. A partitioned append whose input is a SQL relation built here.
	parted := filepath.Join(dir, "parted")
	r, err := s.Execute(ctx, &fcpb.WriteCommand{
		Input:       filecommit.SQL("SELECT id, CAST(id % 4 AS INT) AS part, concat('row-', id) AS name FROM range(0, 100)"),
		Path:        parted,
		Mode:        fcpb.SaveMode_SAVE_MODE_APPEND,
		PartitionBy: []string{"part"},
	})
	if err != nil {
		t.Fatalf("write: %v (class %s)", err, filecommit.ErrorClass(err))
	}
	sum := r.Summary
	if !sum.GetCommitted() || sum.GetVersion() != 0 || sum.GetNumOutputRows() != 100 {
		t.Fatalf("write summary: %v", sum)
	}
	if int64(len(r.Actions)) != sum.GetNumAddFiles() || sum.GetNumAddFiles() < 4 || r.Batches < 1 {
		t.Fatalf("write: %d actions in %d batches, summary says %d adds", len(r.Actions), r.Batches, sum.GetNumAddFiles())
	}
	for _, a := range r.Actions {
		add := a.GetAdd()
		if add == nil || len(add.GetPartitionValues()) != 1 || add.GetPartitionValues()[0].GetColumn() != "part" {
			t.Fatalf("not an add with partition value part: %v", a)
		}
	}
	record("parted", r)

	// 2. A row-level DELETE with a SQL condition (rowlevel.proto).
	r, err = s.Execute(ctx, &fcpb.DeleteCommand{Path: parted, Condition: filecommit.Expr("id < 10")})
	if err != nil {
		t.Fatalf("delete: %v (class %s)", err, filecommit.ErrorClass(err))
	}
	if r.Summary.GetVersion() != 1 || r.Summary.GetNumDeletedRows() != 10 || r.Summary.GetNumRemoveFiles() < 1 {
		t.Fatalf("delete summary: %v", r.Summary)
	}
	record("parted", r)

	// 3. An overwrite of a new table from a Range relation, with a txn; then the same txn again
	// commits nothing.
	ranged := filepath.Join(dir, "ranged")
	write := &fcpb.WriteCommand{
		Input: filecommit.Range(0, 1000, 1),
		Path:  ranged,
		Mode:  fcpb.SaveMode_SAVE_MODE_OVERWRITE,
		Txn:   &fcpb.Transaction{AppId: "go-contract-test", Version: 7},
	}
	r, err = s.Execute(ctx, write)
	if err != nil {
		t.Fatalf("range write: %v", err)
	}
	if !r.Summary.GetCommitted() || r.Summary.GetNumOutputRows() != 1000 {
		t.Fatalf("range write summary: %v", r.Summary)
	}
	record("ranged", r)
	r, err = s.Execute(ctx, write)
	if err != nil {
		t.Fatalf("range write again: %v", err)
	}
	if r.Summary.GetCommitted() || r.Summary.GetVersion() != 0 || len(r.Actions) != 0 {
		t.Fatalf("a repeated txn committed: %v", r.Summary)
	}
	record("ranged", r)

	// 4. Write, then publish later: a staged append of the partitioned table, published by id as
	// version 2; publishing it again commits nothing.
	r, err = s.Execute(ctx, &fcpb.WriteCommand{
		Input: filecommit.SQL("SELECT id, CAST(id % 4 AS INT) AS part, concat('row-', id) AS name FROM range(100, 110)"),
		Path:  parted,
		Stage: &fcpb.Stage{},
	})
	if err != nil {
		t.Fatalf("staged write: %v (class %s)", err, filecommit.ErrorClass(err))
	}
	if r.Staged == nil || r.Staged.GetId() == "" || r.Summary.GetCommitted() || r.Staged.GetReadVersion() != 1 {
		t.Fatalf("staged write: %v", r.Staged)
	}
	publish := &fcpb.PublishStagedCommand{Path: parted, StagedIds: []string{r.Staged.GetId()}}
	r, err = s.Execute(ctx, publish)
	if err != nil {
		t.Fatalf("publish: %v (class %s)", err, filecommit.ErrorClass(err))
	}
	if !r.Summary.GetCommitted() || r.Summary.GetVersion() != 2 || r.Summary.GetNumOutputRows() != 10 {
		t.Fatalf("publish summary: %v", r.Summary)
	}
	record("parted", r)
	r, err = s.Execute(ctx, publish)
	if err != nil || r.Summary.GetCommitted() || r.Summary.GetVersion() != 2 {
		t.Fatalf("publish again: %v %v", r, err)
	}

	// 5. An error path: DELETE on a path without a table carries Delta's error class.
	_, err = s.Execute(ctx, &fcpb.DeleteCommand{Path: filepath.Join(dir, "missing")})
	if got := filecommit.ErrorClass(err); got != "DELTA_MISSING_DELTA_TABLE" {
		t.Fatalf("delete of a missing table: class %q, error %v", got, err)
	}
	if got := filecommit.SQLState(err); got != "42P01" {
		t.Fatalf("delete of a missing table: SQLSTATE %q", got)
	}

	// 6. The plain Spark Connect write (WriteOperation, source "delta", as any Spark Connect client
	// sends df.write.format("delta")): a partitioned append, an overwrite of one partition with
	// replaceWhere, and mode "error" on the existing table refused with Delta's class.
	std := filepath.Join(dir, "standard")
	save := filecommit.SaveDelta(filecommit.SQL("SELECT id, CAST(id % 2 AS INT) AS part FROM range(0, 20)"), std,
		sparkpb.WriteOperation_SAVE_MODE_APPEND, nil, "part")
	if _, err := s.ExecuteCommand(ctx, save); err != nil {
		t.Fatalf("WriteOperation append: %v (class %s)", err, filecommit.ErrorClass(err))
	}
	replace := filecommit.SaveDelta(filecommit.SQL("SELECT id, CAST(0 AS INT) AS part FROM range(100, 105)"), std,
		sparkpb.WriteOperation_SAVE_MODE_OVERWRITE, map[string]string{"replaceWhere": "part = 0"})
	if _, err := s.ExecuteCommand(ctx, replace); err != nil {
		t.Fatalf("WriteOperation replaceWhere: %v (class %s)", err, filecommit.ErrorClass(err))
	}
	_, err = s.ExecuteCommand(ctx, filecommit.SaveDelta(filecommit.SQL("SELECT 1 AS id, 1 AS part"), std,
		sparkpb.WriteOperation_SAVE_MODE_ERROR_IF_EXISTS, nil))
	if got := filecommit.ErrorClass(err); got != "DELTA_TABLE_ALREADY_EXISTS" {
		t.Fatalf("WriteOperation mode error on a table: class %q, error %v", got, err)
	}
	// Read back through format("delta") on the server: version 0 (20 rows) copied by a contract
	// write, whose summary counts the rows the standard reader returned.
	r, err = s.Execute(ctx, &fcpb.WriteCommand{
		Input: filecommit.ReadDelta(std, map[string]string{"versionAsOf": "0"}),
		Path:  filepath.Join(dir, "standard_v0"),
		Mode:  fcpb.SaveMode_SAVE_MODE_APPEND,
	})
	if err != nil {
		t.Fatalf("copy of a format(\"delta\") read: %v (class %s)", err, filecommit.ErrorClass(err))
	}
	if r.Summary.GetNumOutputRows() != 20 {
		t.Fatalf("format(\"delta\") read of version 0: %d rows, want 20", r.Summary.GetNumOutputRows())
	}

	// 7. SQL MERGE INTO sent as a plain SQL command (no filecommit message): the 15 rows of the
	// standard table (odd ids 1..19 in part 1, ids 100..104 in part 0) merged with ids 15..24:
	// 3 matched rows deleted, 7 inserted, so 19 rows, counted by a contract copy of the table.
	merge := filecommit.SQLCommand("MERGE INTO delta.`" + std + "` AS t " +
		"USING (SELECT id, CAST(1 AS INT) AS part FROM range(15, 25)) AS s ON t.id = s.id " +
		"WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *")
	if _, err := s.ExecuteCommand(ctx, merge); err != nil {
		t.Fatalf("SQL MERGE INTO: %v (class %s)", err, filecommit.ErrorClass(err))
	}
	r, err = s.Execute(ctx, &fcpb.WriteCommand{
		Input: filecommit.ReadDelta(std, nil),
		Path:  filepath.Join(dir, "standard_merged"),
		Mode:  fcpb.SaveMode_SAVE_MODE_APPEND,
	})
	if err != nil {
		t.Fatalf("copy after the SQL MERGE: %v (class %s)", err, filecommit.ErrorClass(err))
	}
	if r.Summary.GetNumOutputRows() != 19 {
		t.Fatalf("rows after the SQL MERGE: %d, want 19", r.Summary.GetNumOutputRows())
	}
	_, err = s.ExecuteCommand(ctx, filecommit.SQLCommand("MERGE INTO delta.`"+filepath.Join(dir, "missing")+
		"` AS t USING (SELECT 1 AS id) AS s ON t.id = s.id WHEN MATCHED THEN DELETE"))
	if got := filecommit.ErrorClass(err); got == "" || got == "INTERNAL_ERROR" {
		t.Fatalf("SQL MERGE into a missing table: class %q, error %v", got, err)
	}

	data, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reportPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
