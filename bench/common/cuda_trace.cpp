// A timeline of any CUDA program, for the profiles behind the benchmarks where Nsight Systems is
// not available: a CUPTI injection library. Loaded by the CUDA driver when the program starts,
//   CUDA_INJECTION64_PATH=BUILD/bench/libspira_cuda_trace.so SPIRA_TRACE_OUT=trace.tsv PROGRAM ...
// it records every kernel, copy, memset, synchronisation and CUDA runtime call of the program and
// writes them when it exits, one per line: kind, start and end (ns, the device's clock as CUPTI
// reports it), the stream (-1 where none), the correlation id, and a name (the kernel's, the
// runtime function's, the copy's direction and bytes). bench/common/cuda_trace.py summarises a
// window of it (where the host waits, the gaps between kernels).
//
// Written for CUPTI of CUDA 13 (its record versions: Kernel10, Memcpy6, Memset4, Synchronization2).
#include <cupti.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct record {
  const char* kind;
  std::uint64_t start, end;
  long long stream;
  std::uint32_t correlation;
  std::string name;
};

std::mutex records_mutex;
std::vector<record>* records = nullptr;  // leaked on purpose: written at exit

constexpr std::size_t buffer_bytes = std::size_t(8) << 20;

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records)
{
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, buffer_bytes));
  *size = *buffer != nullptr ? buffer_bytes : 0;
  *max_records = 0;
}

const char* copy_kind(std::uint8_t kind)
{
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    default:
      return "other";
  }
}

const char* sync_kind(CUpti_ActivitySynchronizationType type)
{
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return "stream_wait_event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "stream";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "context";
    default:
      return "other";
  }
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid)
{
  std::vector<record> mine;
  CUpti_Activity* a = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS) {
    switch (a->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
        mine.push_back({"kernel", k->start, k->end, (long long)k->streamId, k->correlationId,
                        k->name != nullptr ? k->name : "?"});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(a);
        mine.push_back(
            {"copy", m->start, m->end, (long long)m->streamId, m->correlationId,
             std::string(copy_kind(m->copyKind)) + " " + std::to_string(m->bytes) + " B"});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(a);
        mine.push_back({"memset", m->start, m->end, (long long)m->streamId, m->correlationId,
                        std::to_string(m->bytes) + " B"});
        break;
      }
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(a);
        const long long stream =
            s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : (long long)s->streamId;
        mine.push_back({"sync", s->start, s->end, stream, s->correlationId, sync_kind(s->type)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME: {
        const auto* r = reinterpret_cast<const CUpti_ActivityAPI*>(a);
        const char* name = nullptr;
        cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, r->cbid, &name);
        mine.push_back({"runtime", r->start, r->end, -1, r->correlationId, name ? name : "?"});
        break;
      }
      default:
        break;
    }
  }
  std::free(buffer);
  const std::lock_guard<std::mutex> lock(records_mutex);
  records->insert(records->end(), mine.begin(), mine.end());
}

void write_records()
{
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  const char* path = std::getenv("SPIRA_TRACE_OUT");
  std::FILE* f = std::fopen(path != nullptr ? path : "cuda_trace.tsv", "w");
  if (f == nullptr) {
    std::fprintf(stderr, "cuda_trace: cannot write %s\n",
                 path != nullptr ? path : "cuda_trace.tsv");
    return;
  }
  const std::lock_guard<std::mutex> lock(records_mutex);
  for (const record& r : *records) {
    std::fprintf(f, "%s\t%llu\t%llu\t%lld\t%u\t%s\n", r.kind, (unsigned long long)r.start,
                 (unsigned long long)r.end, r.stream, r.correlation, r.name.c_str());
  }
  std::fclose(f);
}

}  // namespace

/// Called by the CUDA driver when CUDA_INJECTION64_PATH names this library.
extern "C" int InitializeInjection()
{
  records = new std::vector<record>();
  for (const CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
        CUPTI_ACTIVITY_KIND_RUNTIME}) {
    if (cuptiActivityEnable(kind) != CUPTI_SUCCESS) {
      std::fprintf(stderr, "cuda_trace: cannot enable activity kind %d\n", int(kind));
    }
  }
  cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  std::atexit(write_records);
  return 1;
}
