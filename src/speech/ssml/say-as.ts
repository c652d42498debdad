// SSML say-as: how a piece of text is read (its written form and what the engine is given for it). Numbers, dates,
// times, telephone numbers and currency are given to the engine in a form every engine reads the same way.

export interface Reading {
  /** The written form: what captions and timestamps show. */
  written: string;
  /** What the engine says; undefined: the written form. */
  spoken?: string;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DATE_FORMATS = new Set(['mdy', 'dmy', 'ymd', 'md', 'dm', 'ym', 'my', 'd', 'm', 'y']);
export const INTERPRETATIONS = ['characters', 'spell-out', 'cardinal', 'number', 'ordinal', 'digits', 'date', 'time', 'telephone', 'currency'] as const;

/** The reading of `text` as `interpretAs` (format: a date's field order); throws `bad` for what it cannot read. */
export function sayAs(text: string, interpretAs: string | undefined, format: string | undefined, bad: (problem: string) => Error): Reading {
  const written = text.trim();
  switch (interpretAs) {
    case 'characters':
    case 'spell-out': {
      // One written word per character, so that timestamps and captions show each as it is said.
      const characters = [...written.replace(/\s+/gu, '')].map((char) => (/\p{L}/u.test(char) ? char.toUpperCase() : char));
      return { written: characters.join(' ') };
    }
    case 'digits':
      return { written, spoken: [...written].filter((char) => /\p{N}/u.test(char)).join(' ') };
    case 'cardinal':
    case 'number':
      return { written, spoken: written.replace(/[,\s](?=\d{3}\b)/gu, '') };
    case 'ordinal': {
      const number = /^\d+$/u.exec(written.replace(/[,\s]/gu, ''))?.[0];
      if (!number) throw bad(`"${written}" is not a whole number to read as an ordinal`);
      return { written, spoken: `${number}${ordinalSuffix(Number(number))}` };
    }
    case 'date':
      return { written, spoken: dateReading(written, format ?? 'ymd', bad) };
    case 'time':
      return { written, spoken: written.replace(/^(\d{1,2}):00\b/u, "$1 o'clock").replace(/(\d)\s*([ap])\.?m\.?\b/iu, '$1 $2 m') };
    case 'telephone': {
      // Digit by digit, a pause between the groups.
      const groups = written.split(/\D+/u).filter(Boolean).map((group) => [...group].join(' '));
      return { written, spoken: `${written.startsWith('+') ? 'plus ' : ''}${groups.join(', ')}` };
    }
    case 'currency':
      return { written };
    case undefined:
      throw bad('interpret-as is required');
    default:
      throw bad(`interpret-as "${interpretAs}" is not one of ${INTERPRETATIONS.join(', ')}`);
  }
}

function ordinalSuffix(number: number): string {
  const lastTwo = number % 100;
  if (lastTwo >= 11 && lastTwo <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][number % 10] ?? 'th';
}

/** A date's fields (separated by -, /, . or spaces) in `format`'s order → "March 15th, 2024" and the like. */
function dateReading(text: string, format: string, bad: (problem: string) => Error): string {
  if (!DATE_FORMATS.has(format)) throw bad(`format "${format}" is not one of ${[...DATE_FORMATS].join(', ')}`);
  const fields = text.split(/[-/.\s]+/u).filter(Boolean);
  if (fields.length !== format.length || fields.some((field) => !/^\d+$/u.test(field))) {
    throw bad(`"${text}" is not a date in the format ${format}`);
  }
  const value = (letter: string) => {
    const index = format.indexOf(letter);
    return index === -1 ? undefined : Number(fields[index]);
  };
  const [day, month, year] = [value('d'), value('m'), value('y')];
  if (month !== undefined && (month < 1 || month > 12)) throw bad(`"${text}": ${month} is no month`);
  if (day !== undefined && (day < 1 || day > 31)) throw bad(`"${text}": ${day} is no day of a month`);
  const monthName = month === undefined ? undefined : MONTHS[month - 1];
  const dayName = day === undefined ? undefined : `${day}${ordinalSuffix(day)}`;
  const parts = [monthName && dayName ? `${monthName} ${dayName}` : (monthName ?? (dayName ? `the ${dayName}` : undefined)), year === undefined ? undefined : String(year)];
  return parts.filter(Boolean).join(', ');
}
