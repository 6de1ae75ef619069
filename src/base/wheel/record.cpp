#include "base/wheel/record.hpp"

namespace ascend_setup {

std::string urlsafe_b64_nopad(std::string_view bytes) {
  static constexpr char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = static_cast<unsigned char>(bytes[i]) << 16 |
                       static_cast<unsigned char>(bytes[i + 1]) << 8 |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += alphabet[n >> 18];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    out += alphabet[n & 63];
  }
  if (bytes.size() - i == 1) {
    const uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    out += alphabet[n >> 18];
    out += alphabet[(n >> 12) & 63];
  } else if (bytes.size() - i == 2) {
    const uint32_t n =
        static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += alphabet[n >> 18];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
  }
  return out;
}

namespace {

// csv.writer's QUOTE_MINIMAL with delimiter ',', quotechar '"'.
std::string field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) {
    return text;
  }
  std::string quoted = "\"";
  for (const char c : text) {
    quoted += c;
    if (c == '"') {
      quoted += '"';
    }
  }
  return quoted + "\"";
}

}  // namespace

std::string format_record(const std::vector<RecordRow>& rows) {
  std::string out;
  for (const auto& row : rows) {
    out += field(row.path) + "," + field(row.hash) + "," + field(row.size) + "\n";
  }
  return out;
}

std::map<std::string, RecordRow> parse_record(std::string_view text) {
  std::map<std::string, RecordRow> rows;
  std::vector<std::string> fields(1);
  bool quoted = false;
  const auto end_row = [&] {
    if (fields.size() == 3) {
      rows[fields[0]] = RecordRow{fields[0], fields[1], fields[2]};
    }
    fields.assign(1, std::string());
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      end_row();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (fields.size() > 1 || !fields[0].empty()) {
    end_row();
  }
  return rows;
}

}  // namespace ascend_setup
