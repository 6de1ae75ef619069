// The Ascend `Sdist`: setuptools' sdist (or upstream's, if it registers one)
// whose release tree also holds the checkout record (checkout_record.hpp):
// HEAD's abbreviated id and the branch, which the wheel built from the sdist
// needs for the same version (+git<id>) and build mode as the checkout's.
// Installed as cmdclass["sdist"].
#include "base/layer/checkout_record.hpp"
#include "host/overrides/overrides.hpp"

#include <spdlog/spdlog.h>

namespace py = pybind11;

namespace ascend_setup {

void override_sdist(const OverrideContext& context) {
  py::object base = registered_command(context, "sdist", "setuptools.command.sdist");
  py::object sdist = define_subclass(context, "Sdist", base,
                                     "ascend-setup: sdist recording what the layer read from git");
  const std::filesystem::path tree_root = context.tree_root;
  const int hash_length = context.profile->version.git_hash_length;
  sdist.attr("make_release_tree") = py::cpp_function(
      [base, tree_root, hash_length](py::object self, py::object base_dir, py::object files) {
        base.attr("make_release_tree")(self, base_dir, files);
        // A checkout's facts, or those of the sdist this tree was unpacked from.
        if (const auto facts = checkout_facts(tree_root, hash_length)) {
          const std::filesystem::path dir = py::str(base_dir).cast<std::string>();
          write_checkout_record(dir, *facts);
          spdlog::debug("recorded the checkout's HEAD and branch in {}",
                        (dir / checkout_record_name).string());
        }
      },
      py::name("make_release_tree"), py::is_method(sdist));
  context.module.attr("Sdist") = sdist;
}

}  // namespace ascend_setup
