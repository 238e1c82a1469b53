// The zero-shot task kinds `ember eval --task` scores and a sweep's `tasks:` name (eval/task_scoring.h).
#pragma once
#include <span>

#include "ember/config/enum_names.h"

namespace ember {

// multiple choice (HellaSwag layout), last-word prediction, associative recall (data/recall_task.h)
enum class TaskKind { choice, lambada, recall };
inline std::span<const EnumName<TaskKind>> enum_names(TaskKind) {
  static constexpr EnumName<TaskKind> names[] = {
      {TaskKind::choice, "choice"}, {TaskKind::lambada, "lambada"}, {TaskKind::recall, "recall"}};
  return names;
}

}  // namespace ember
