#!/usr/bin/env bash
# Checks the commit-message convention of CONTRIBUTING.md on every commit since it was adopted:
# a subject of at most 72 characters in the imperative (its first word is not one of the past,
# third-person or -ing forms below), and a blank line between the subject and a body.
#   .ci/commit_subjects.sh [REPO] [FIRST]   (REPO: default this checkout; FIRST: the first commit
#   held to the convention, default the one that adopted it)
set -euo pipefail
repo="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
first="${2:-a39f147}"  # "Move the sweep life cycle into experiment/; answer kind questions"
git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || { echo "commit_subjects: $repo is not a git checkout" >&2; exit 2; }
if ! git -C "$repo" cat-file -e "$first^{commit}" 2>/dev/null; then
  echo "commit_subjects: commit $first is not in $repo (a shallow clone? fetch with --unshallow)" >&2
  exit 2
fi
# First words that say what a commit did or does rather than what it does when applied.
not_imperative=" added adds adding fixed fixes fixing updated updates updating removed removes removing changed
  changes changing implemented implements implementing improved improves improving refactored refactors
  refactoring moved moves moving renamed renames renaming cleaned cleans cleanup made makes created creates
  bumped bumps tweaked tweaks merged merges wip "
bad=0
while read -r sha; do
  message="$(git -C "$repo" log -1 --format=%B "$sha")"
  subject="$(head -n1 <<<"$message")"
  second="$(sed -n 2p <<<"$message")"
  if [ "${#subject}" -gt 72 ]; then
    echo "commit ${sha:0:12}: subject is ${#subject} characters (at most 72): $subject" >&2
    bad=1
  fi
  first_word="$(awk '{print tolower($1)}' <<<"$subject" | tr -d ':,.')"
  if [[ "$not_imperative" == *" $first_word "* ]]; then
    echo "commit ${sha:0:12}: subject is not in the imperative ('${subject%% *}'; write 'Add', 'Fix', ...): $subject" >&2
    bad=1
  fi
  if [ -n "$second" ]; then
    echo "commit ${sha:0:12}: no blank line after the subject: $subject" >&2
    bad=1
  fi
done < <(git -C "$repo" rev-parse "$first"; git -C "$repo" rev-list "$first..HEAD")
[ "$bad" -eq 0 ] || { echo "commit_subjects: see CONTRIBUTING.md, \"Commits\"" >&2; exit 1; }
echo "commit messages since $first follow CONTRIBUTING.md"
