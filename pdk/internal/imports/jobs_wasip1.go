//go:build wasip1

package imports

//go:wasmimport extism:host/user wai_job_start
func waiJobStart(uint64) uint64

// JobStart calls wai_job_start.
func JobStart(req []byte) []byte { return roundTrip(waiJobStart, req) }

//go:wasmimport extism:host/user wai_job_status
func waiJobStatus(uint64) uint64

// JobStatus calls wai_job_status.
func JobStatus(req []byte) []byte { return roundTrip(waiJobStatus, req) }

//go:wasmimport extism:host/user wai_job_cancel
func waiJobCancel(uint64) uint64

// JobCancel calls wai_job_cancel.
func JobCancel(req []byte) []byte { return roundTrip(waiJobCancel, req) }

//go:wasmimport extism:host/user wai_job_list
func waiJobList(uint64) uint64

// JobList calls wai_job_list.
func JobList(req []byte) []byte { return roundTrip(waiJobList, req) }
