//go:build !wasip1

package imports

// JobStart calls wai_job_start.
func JobStart(req []byte) []byte { return call("wai_job_start", req) }

// JobStatus calls wai_job_status.
func JobStatus(req []byte) []byte { return call("wai_job_status", req) }

// JobCancel calls wai_job_cancel.
func JobCancel(req []byte) []byte { return call("wai_job_cancel", req) }

// JobList calls wai_job_list.
func JobList(req []byte) []byte { return call("wai_job_list", req) }
