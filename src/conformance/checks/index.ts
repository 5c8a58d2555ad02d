import type { ConformanceCheck } from '../check.ts';
import { authChecks } from './auth.ts';
import { errorChecks } from './errors.ts';
import { fieldCreationChecks } from './field-creation.ts';
import { fieldDeletionChecks } from './field-deletion.ts';
import { fieldExpressionErrorChecks } from './field-expression-errors.ts';
import { fieldFlagChecks } from './field-flags.ts';
import { fieldListChecks } from './field-listing.ts';
import { unknownFieldChecks } from './field-unknown.ts';
import { fieldUpdateChecks } from './field-updates.ts';
import { recordChangeChecks } from './record-changes.ts';
import { recordListChecks } from './records-list.ts';
import { recordValueChecks } from './record-values.ts';
import { recordChecks } from './records.ts';
import { requestChecks } from './requests.ts';
import { schemaChangeChecks } from './schema-changes.ts';
import { statusChecks } from './statuses.ts';
import { tableChecks } from './tables.ts';
import { workspaceChecks } from './workspace.ts';

/** Every check, in the order of the API description. */
export const ALL_CHECKS: readonly ConformanceCheck[] = [
  ...authChecks,
  ...workspaceChecks,
  ...tableChecks,
  ...fieldCreationChecks,
  ...fieldListChecks,
  ...fieldUpdateChecks,
  ...fieldDeletionChecks,
  ...fieldExpressionErrorChecks,
  ...fieldFlagChecks,
  ...unknownFieldChecks,
  ...recordChecks,
  ...recordValueChecks,
  ...recordListChecks,
  ...recordChangeChecks,
  ...schemaChangeChecks,
  ...requestChecks,
  ...errorChecks,
  ...statusChecks,
];
