# .ci/commit_subjects.sh passes a history that follows CONTRIBUTING.md and names each commit that
# does not: a 73-character subject, a body without the blank line, a subject not in the imperative;
# refuses a missing first commit.
source "$(dirname "$0")/lib_common.sh"
CHECK="$EMBER_SOURCE_DIR/.ci/commit_subjects.sh"
git init -q repo
commit() { git -C repo -c user.name=t -c user.email=t@t commit -q --allow-empty -m "$1"; }
commit "Start"
commit "Add a feature that is named in under seventy-two characters"
first=$(git -C repo rev-parse HEAD)
commit "$(printf 'Explain why in a body\n\nThe body follows a blank line.')"
bash "$CHECK" repo "$first" >ok.out 2>&1 || { cat ok.out >&2; fail "a conforming history was refused"; }
long=$(printf 'A%.0s' $(seq 73))
commit "$long"
commit "$(printf 'Glue the body to the subject\nwithout a blank line')"
commit "Added a feature, said in the past"
commit "fixes: a bug, said in the third person"
rc=0; bash "$CHECK" repo "$first" >bad.out 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat bad.out >&2; fail "a bad history exited $rc, not 1"; }
grep -q "subject is 73 characters" bad.out || fail "the long subject is not named"
grep -q "no blank line after the subject: Glue the body" bad.out || fail "the missing blank line is not named"
grep -q "not in the imperative ('Added'.*: Added a feature" bad.out || fail "a past-tense subject is not named"
grep -q "not in the imperative ('fixes:'" bad.out || fail "a third-person subject is not named"
[ "$(grep -c 'not in the imperative' bad.out)" -eq 2 ] || fail "an imperative subject was refused"
rc=0; bash "$CHECK" repo 0123456789abcdef0123456789abcdef01234567 >missing.out 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "is not in" missing.out || fail "a missing first commit was not refused"
echo "commit_subjects: good history passes, bad subjects and bodies named"
