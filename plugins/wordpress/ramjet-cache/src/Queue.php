<?php
/**
 * Queue: purges kept until they can be delivered.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Purges that could not be delivered (no admin API configured, or it
 * failed, and no response to carry a header), kept in an option until the
 * next request that can deliver them. Read-modify-write: two processes
 * queueing at once may lose one set, which then waits for its TTL; the
 * admin API avoids the queue altogether.
 */
class Queue {

	/** Most tags or URLs kept; past this the queue becomes a site purge. */
	const MAX_ITEMS = 1000;

	/**
	 * Option name.
	 *
	 * @var string
	 */
	private $option;

	/**
	 * The site tag, which replaces an overflowing queue.
	 *
	 * @var string
	 */
	private $site;

	/**
	 * A queue stored in $option.
	 *
	 * @param string $option Option name.
	 * @param string $site   Site tag.
	 */
	public function __construct( $option, $site ) {
		$this->option = $option;
		$this->site   = $site;
	}

	/**
	 * Adds tags and URLs.
	 *
	 * @param string[] $tags Tags.
	 * @param string[] $urls Absolute URLs.
	 */
	public function add( array $tags, array $urls ) {
		if ( ! $tags && ! $urls ) {
			return;
		}
		$queued = $this->peek();
		$tags   = array_values( array_unique( array_merge( $queued['tags'], $tags ) ) );
		$urls   = array_values( array_unique( array_merge( $queued['urls'], $urls ) ) );
		if ( count( $tags ) + count( $urls ) > self::MAX_ITEMS ) {
			$tags = array( $this->site );
			$urls = array();
		}
		update_option(
			$this->option,
			array(
				'tags' => $tags,
				'urls' => $urls,
			),
			true
		);
	}

	/**
	 * The queued purges, without removing them.
	 *
	 * @return array{tags: string[], urls: string[]}
	 */
	public function peek() {
		$queued = get_option( $this->option, array() );
		$queued = is_array( $queued ) ? $queued : array();
		return array(
			'tags' => isset( $queued['tags'] ) ? (array) $queued['tags'] : array(),
			'urls' => isset( $queued['urls'] ) ? (array) $queued['urls'] : array(),
		);
	}

	/**
	 * Empties the queue after its purges were delivered.
	 */
	public function clear() {
		delete_option( $this->option );
	}
}
