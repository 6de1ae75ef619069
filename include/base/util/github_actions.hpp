// GitHub Actions' workflow commands and step summary, as its runner reads
// them: a command is a line of its own ("::group::NAME", "::endgroup::",
// "::error file=F,line=N::MESSAGE") on the step's stdout or stderr (the
// runner parses both; these go to stderr, the stream every log line and every
// child's output shares here, so their order holds). Messages and properties
// are escaped as GitHub's toolkit does. Whether a run is on GitHub Actions is
// the environment's business (layer/environment.hpp:
// github_actions_from_environment()).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ascend_setup {

struct GithubActions {
  bool on = false;                                    // GITHUB_ACTIONS=true
  std::optional<std::filesystem::path> step_summary;  // GITHUB_STEP_SUMMARY, when set
};

// A command's message: % \r \n as %25 %0D %0A.
std::string workflow_escape_data(std::string_view text);
// A property's value: as the message, and : , as %3A %2C.
std::string workflow_escape_property(std::string_view text);

// "::error file=F,line=N::MESSAGE" (no line property when `line` is 0 or
// less; no file property when `file` is empty), without the newline.
std::string error_annotation(std::string_view file, int line, std::string_view message);

// Called before each command is written, so that what the run printed before
// it (Python's buffered streams) comes out first; nullptr for none. The
// function must be safe to call from any thread that writes a command.
void set_workflow_output_flush(void (*flush)());

// Writes `command` as shown (the secrets of its URLs masked: shown_url.hpp)
// and a newline to stderr, after stdio's and the flush function's buffered
// output. Never throws (a lost command loses no build).
void write_workflow_command(std::string_view command);

// A collapsed group around what runs in its scope: "::group::NAME" when
// constructed, "::endgroup::" when destroyed (on every way out: a failure
// or a stop unwinds through it). Groups never nest: inside an open group,
// or when `on` is false, it writes nothing.
class WorkflowGroup {
 public:
  WorkflowGroup(bool on, std::string_view name);
  ~WorkflowGroup();
  WorkflowGroup(const WorkflowGroup&) = delete;
  WorkflowGroup& operator=(const WorkflowGroup&) = delete;

 private:
  bool opened_ = false;
};

// Appends `markdown`, as shown (shown_url.hpp), to the step summary file
// (created when absent; what it holds is kept). Throws Error naming the file
// when it cannot.
void append_step_summary(const std::filesystem::path& file, std::string_view markdown);

}  // namespace ascend_setup
