import type { CsvNumberFormat, FieldType } from '../../api/index.ts';

/**
 * A CSV cell is text; record values have shapes (a number, a boolean, an array…). This turns a
 * cell into the value a JSON request would carry for the field's type, so that the import then
 * goes through the very checks of record create and update (record-checks.ts): only the text
 * syntax that JSON would not have is read here (number formats, boolean words, lists).
 */

/** A cell whose text is no value of its field's type (the only allocation a cell can add). */
export class CellFault {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

const NUMBER_SYNTAX: Record<CsvNumberFormat, { pattern: RegExp; group: RegExp; decimal: string; example: string }> = {
  // 1234.5, 1,234.5, -0.5, .5, 1e-3
  us: { pattern: /^[-+]?(\d{1,3}(,\d{3})+|\d*)(\.\d+)?([eE][-+]?\d+)?$/, group: /,/g, decimal: '.', example: '1,234.5' },
  // 1234,5, 1.234,5, 1 234,5 (space, no-break or narrow no-break space between groups)
  eu: { pattern: /^[-+]?(\d{1,3}([. \u00a0\u202f]\d{3})+|\d*)(,\d+)?([eE][-+]?\d+)?$/, group: /[. \u00a0\u202f]/g, decimal: ',', example: '1.234,5' },
};

/** Digits with an optional sign: a plain integer reads the same in both formats. */
const PLAIN_INTEGER = /^[-+]?\d+$/;

function numberCell(text: string, format: CsvNumberFormat): unknown {
  if (PLAIN_INTEGER.test(text)) return Number(text);
  const syntax = NUMBER_SYNTAX[format];
  if (!syntax.pattern.test(text) || !/\d/.test(text)) {
    return new CellFault(`expected a number in the ${format} format, such as ${syntax.example}`);
  }
  const plain = text.replace(syntax.group, '').replace(syntax.decimal, '.');
  return Number(plain);
}

const BOOLEAN_WORDS = new Map<string, boolean>([['true', true], ['false', false], ['yes', true], ['no', false], ['1', true], ['0', false]]);

function listCell(text: string): unknown {
  if (text.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return new CellFault('expected a JSON array, or values separated by commas');
    }
  }
  return text.split(',').map((item) => item.trim()).filter((item) => item !== '');
}

/** Text kept exactly as it is (spaces count); every other type ignores surrounding spaces. */
function keepsSpaces(type: FieldType): boolean {
  return type === 'string' || type === 'html';
}

/** Whether a cell gives no value: no characters, or (except for text) only spaces. */
export function isEmptyCell(type: FieldType, text: string): boolean {
  return text === '' || (!keepsSpaces(type) && text.trim() === '');
}

/** The request value of a non-empty cell for a field of `type`, or a CellFault. */
export function cellValue(type: FieldType, text: string, numberFormat: CsvNumberFormat): unknown {
  if (keepsSpaces(type)) return text;
  const trimmed = text.trim();
  switch (type) {
    case 'number':
      return numberCell(trimmed, numberFormat);
    case 'boolean': {
      const value = BOOLEAN_WORDS.get(trimmed.toLowerCase());
      return value === undefined ? new CellFault('expected true or false (also yes or no, 1 or 0)') : value;
    }
    case 'reference':
      return /^[0-9]+$/.test(trimmed) ? Number(trimmed) : trimmed;
    case 'multi':
    case 'dmulti':
      return listCell(trimmed);
    case 'any':
    case 'unknown':
      try {
        return JSON.parse(trimmed) as unknown;
      } catch {
        return trimmed;
      }
    default:
      return trimmed;
  }
}
