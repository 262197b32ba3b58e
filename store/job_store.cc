#include "store/job_store.h"

#include <unistd.h>

#include <cstdio>
#include <random>
#include <string_view>

namespace kiln::store {

namespace {

constexpr JobState kStates[] = {JobState::kQueued, JobState::kRunning, JobState::kPaused,
                                JobState::kDone,   JobState::kFailed,  JobState::kCancelled};

}  // namespace

const char* job_state_name(JobState s) {
  switch (s) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kPaused:
      return "paused";
    case JobState::kDone:
      return "done";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::optional<JobState> parse_job_state(const std::string& name) {
  for (JobState s : kStates) {
    if (name == job_state_name(s)) return s;
  }
  return std::nullopt;
}

bool is_final(JobState s) {
  return s == JobState::kDone || s == JobState::kFailed || s == JobState::kCancelled;
}

const char* job_request_name(JobRequest r) {
  switch (r) {
    case JobRequest::kNone:
      return "";
    case JobRequest::kPause:
      return "pause";
    case JobRequest::kCancel:
      return "cancel";
  }
  return "";
}

std::optional<JobRequest> parse_job_request(const std::string& name) {
  for (JobRequest r : {JobRequest::kNone, JobRequest::kPause, JobRequest::kCancel}) {
    if (name == job_request_name(r)) return r;
  }
  return std::nullopt;
}

std::string daemon_identity() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::random_device rd;
  char random[24];
  std::snprintf(random, sizeof random, "%08x", rd());
  return std::string(host) + ":" + std::to_string(::getpid()) + ":" + random;
}

std::string owner_host(const std::string& owner) {
  const size_t last = owner.rfind(':');
  return last == std::string::npos ? owner : owner.substr(0, last);
}

namespace {
constexpr std::string_view kJobSourcePrefix = "kiln serve job ";
}

std::string job_source(int64_t id) { return std::string(kJobSourcePrefix) + std::to_string(id); }

std::optional<int64_t> job_of_source(const std::string& source) {
  if (source.size() <= kJobSourcePrefix.size() || source.size() > kJobSourcePrefix.size() + 18 ||
      source.compare(0, kJobSourcePrefix.size(), kJobSourcePrefix) != 0) {
    return std::nullopt;
  }
  int64_t id = 0;
  for (size_t i = kJobSourcePrefix.size(); i < source.size(); ++i) {
    if (source[i] < '0' || source[i] > '9') return std::nullopt;
    id = id * 10 + (source[i] - '0');
  }
  return id;
}

}  // namespace kiln::store
