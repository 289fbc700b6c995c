/** The image build's API for the sandbox and its tests (real nodes import `ImageSet.archives`). */
export {
  defaultImageCacheDir,
  ensureImages,
  imageBuildah,
  type EnsureImagesOptions,
  type ImageSet,
} from './ensure-images.js';
export { IMAGE_REFS, type ImageName } from './image-refs.js';
