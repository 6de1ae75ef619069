#include "base/util/github_actions.hpp"

#include "base/util/shown_url.hpp"
#include "base/util/system_error.hpp"
#include "base/util/unique_fd.hpp"
#include "base/util/whole_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <mutex>

namespace ascend_setup {

namespace {

std::atomic<void (*)()> output_flush{nullptr};
std::mutex group_mutex;
bool group_open = false;  // guarded by group_mutex

std::string escape(std::string_view text, bool property) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      case ':':
        out += property ? "%3A" : ":";
        break;
      case ',':
        out += property ? "%2C" : ",";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string workflow_escape_data(std::string_view text) { return escape(text, false); }

std::string workflow_escape_property(std::string_view text) { return escape(text, true); }

std::string error_annotation(std::string_view file, int line, std::string_view message) {
  std::string properties;
  if (!file.empty()) {
    properties += "file=" + workflow_escape_property(file);
  }
  if (line > 0) {
    properties += (properties.empty() ? "line=" : ",line=") + std::to_string(line);
  }
  return "::error" + (properties.empty() ? "" : " " + properties) +
         "::" + workflow_escape_data(message);
}

void set_workflow_output_flush(void (*flush)()) { output_flush.store(flush); }

void write_workflow_command(std::string_view command) {
  try {
    if (auto* flush = output_flush.load()) {
      flush();
    }
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    std::string line = shown_text(command);
    line += '\n';
    write_fully(STDERR_FILENO, line, "stderr");
  } catch (...) {
    // stderr gone or the flush failed: nothing to tell the user through.
  }
}

WorkflowGroup::WorkflowGroup(bool on, std::string_view name) {
  if (!on) {
    return;
  }
  const std::lock_guard<std::mutex> lock(group_mutex);
  if (group_open) {
    return;
  }
  write_workflow_command("::group::" + workflow_escape_data(name));
  group_open = opened_ = true;
}

WorkflowGroup::~WorkflowGroup() {
  if (!opened_) {
    return;
  }
  const std::lock_guard<std::mutex> lock(group_mutex);
  write_workflow_command("::endgroup::");
  group_open = false;
}

void append_step_summary(const std::filesystem::path& file, std::string_view markdown) {
  UniqueFd fd(::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (!fd) {
    throw system_error("append to the step summary", file, errno);
  }
  write_fully(fd.get(), shown_text(markdown), file);
  if (!fd.close()) {
    throw system_error("append to the step summary", file, errno);
  }
}

}  // namespace ascend_setup
