import type { Tone } from '../nodes/node-state';
import styles from './overview.module.css';

/** The overview card's class for a tone (none for neutral). */
export const toneClass = (tone: Tone) => styles[tone] ?? '';
