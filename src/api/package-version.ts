/**
 * Which package versions upstream accepts: whatever Go's golang.org/x/mod/semver calls valid once a
 * missing leading `v` is added. That grammar is looser than SemVer 2.0 (`1` and `1.2` are valid)
 * but keeps its strictness elsewhere: no leading zeros in numeric parts or numeric prerelease
 * identifiers, prerelease and build metadata only after a full major.minor.patch.
 * The same regular expression is the CRD `pattern` (enforced by the API server, RE2) and ajv's.
 */

const NUMBER = '(0|[1-9][0-9]*)';
/** A prerelease identifier: a number without leading zero, or alphanumerics containing a non-digit. */
const PRERELEASE_ID = '(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)';
const BUILD_ID = '[0-9A-Za-z-]+';

export const PACKAGE_VERSION_PATTERN = `^v?${NUMBER}(\\.${NUMBER}(\\.${NUMBER}(-${PRERELEASE_ID}(\\.${PRERELEASE_ID})*)?(\\+${BUILD_ID}(\\.${BUILD_ID})*)?)?)?$`;

/** Versions become image tags, which are at most 128 characters. */
export const PACKAGE_VERSION_MAX_LENGTH = 128;

const versionRegExp = new RegExp(PACKAGE_VERSION_PATTERN);

export function isValidPackageVersion(version: string): boolean {
  return version.length <= PACKAGE_VERSION_MAX_LENGTH && versionRegExp.test(version);
}
