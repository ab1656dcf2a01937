<?php
/**
 * AdminBar: "Purge this page" and "Purge all" in the toolbar.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Adds a Ramjet menu to the admin bar for users who can manage options and
 * handles its links (admin-post.php, nonce-checked), then returns to the
 * page they came from.
 */
class AdminBar {

	/** admin-post.php action. */
	const ACTION = 'ramjet_cache_purge';

	/**
	 * Purge collector.
	 *
	 * @var Purge
	 */
	private $purge;

	/**
	 * Tags.
	 *
	 * @var Tags
	 */
	private $tags;

	/**
	 * An admin bar menu purging through $purge.
	 *
	 * @param Purge $purge Purge collector.
	 * @param Tags  $tags  Tags.
	 */
	public function __construct( Purge $purge, Tags $tags ) {
		$this->purge = $purge;
		$this->tags  = $tags;
	}

	/**
	 * Hooks into WordPress.
	 */
	public function register() {
		add_action( 'admin_bar_menu', array( $this, 'menu' ), 100 );
		add_action( 'admin_post_' . self::ACTION, array( $this, 'handle' ) );
	}

	/**
	 * Adds the menu.
	 *
	 * @param \WP_Admin_Bar $bar Admin bar.
	 */
	public function menu( $bar ) {
		if ( ! current_user_can( 'manage_options' ) ) {
			return;
		}
		$bar->add_node(
			array(
				'id'    => 'ramjet-cache',
				'title' => esc_html__( 'Ramjet', 'ramjet-cache' ),
			)
		);
		if ( ! is_admin() ) {
			$bar->add_node(
				array(
					'parent' => 'ramjet-cache',
					'id'     => 'ramjet-cache-purge-page',
					'title'  => esc_html__( 'Purge this page', 'ramjet-cache' ),
					'href'   => $this->link( 'page', home_url( add_query_arg( array() ) ) ),
				)
			);
		}
		$bar->add_node(
			array(
				'parent' => 'ramjet-cache',
				'id'     => 'ramjet-cache-purge-all',
				'title'  => esc_html__( 'Purge all', 'ramjet-cache' ),
				'href'   => $this->link( 'all', '' ),
			)
		);
	}

	/**
	 * A nonce-protected purge link.
	 *
	 * @param string $scope "page" or "all".
	 * @param string $url   Page URL for "page".
	 * @return string
	 */
	public function link( $scope, $url ) {
		$args = array(
			'action' => self::ACTION,
			'scope'  => $scope,
		);
		if ( '' !== $url ) {
			$args['url'] = rawurlencode( $url );
		}
		return wp_nonce_url( add_query_arg( $args, admin_url( 'admin-post.php' ) ), self::ACTION );
	}

	/**
	 * Handles a purge link, then redirects back.
	 */
	public function handle() {
		if ( ! current_user_can( 'manage_options' ) ) {
			wp_die( esc_html__( 'You may not purge the cache.', 'ramjet-cache' ), 403 );
		}
		check_admin_referer( self::ACTION );
		$scope = isset( $_GET['scope'] ) ? sanitize_key( wp_unslash( $_GET['scope'] ) ) : '';
		$url   = isset( $_GET['url'] ) ? esc_url_raw( rawurldecode( wp_unslash( $_GET['url'] ) ) ) : ''; // phpcs:ignore WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- esc_url_raw sanitizes.
		if ( 'page' === $scope && '' !== $url ) {
			$this->purge->add_url( $url );
			$back = $url;
		} else {
			$this->purge->add_tags( array( $this->tags->site() ) );
			$back = wp_get_referer() ? wp_get_referer() : admin_url();
		}
		wp_safe_redirect( $back );
		exit;
	}
}
