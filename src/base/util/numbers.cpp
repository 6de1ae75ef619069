#include "base/util/numbers.hpp"

namespace ascend_setup {

std::string_view leading_digits(std::string_view text) {
  size_t length = 0;
  while (length < text.size() && text[length] >= '0' && text[length] <= '9') {
    ++length;
  }
  return text.substr(0, length);
}

}  // namespace ascend_setup
