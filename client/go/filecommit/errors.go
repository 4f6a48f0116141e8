package filecommit

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
)

// ErrorClass is the Spark error class of a server error (e.g. "DELTA_MISSING_DELTA_TABLE"), or ""
// when err carries none. Spark Connect puts it in the gRPC status details, a google.rpc.ErrorInfo
// whose metadata key "errorClass" names the class (Spark's ErrorUtils; pyspark reads the same
// key). Match on the class, never on the message text.
func ErrorClass(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return ""
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if c := info.GetMetadata()["errorClass"]; c != "" {
				return c
			}
		}
	}
	return ""
}

// SQLState is the SQLSTATE of a server error ("" when absent), from the same ErrorInfo metadata
// (key "sqlState").
func SQLState(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return ""
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if s := info.GetMetadata()["sqlState"]; s != "" {
				return s
			}
		}
	}
	return ""
}
