/**
 * Prefixes a step's output the way upstream's log files look: the stream's first chunk starts
 * with `<label><local ISO time> `, and every newline is followed by the same prefix.
 */
import { StringDecoder } from 'node:string_decoder';
import { pyLocalIsoformat } from './python-format.js';

export class OutputStamper {
  private started = false;
  // Decoding across chunk boundaries keeps a multi-byte character from being cut in two.
  private readonly decoder = new StringDecoder('utf8');

  private readonly label: '[out]' | '[err]';

  constructor(label: '[out]' | '[err]') {
    this.label = label;
  }

  stamp(chunk: Buffer | string, now: Date): string {
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    if (text === '') return '';
    const prefix = `${this.label}${pyLocalIsoformat(now)} `;
    if (!this.started) {
      text = prefix + text;
      this.started = true;
    }
    return text.replaceAll('\n', `\n${prefix}`);
  }
}
